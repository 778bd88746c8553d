// Pods' memory and CPU as a node's kubelet reports them (`/stats/summary` through the API server's
// node proxy): any cluster answers it, no host access needed. The kubelet refreshes container
// stats every ~10 s, so these are coarse figures — used for the pods beside the agent under test
// (the quiet node's agent, spire-server), whose 100 ms series nobody asks for.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';

export interface PodStat {
  /** Cumulative CPU of the pod, in core-nanoseconds; null when the kubelet has none yet. */
  cpuCoreNanos: number | null;
  workingSetBytes: number | null;
  usageBytes: number | null;
  /** When the kubelet took the CPU reading (epoch ms). */
  at: number | null;
}

interface SummaryPod {
  podRef?: { name?: string; namespace?: string };
  cpu?: { time?: string; usageCoreNanoSeconds?: number };
  memory?: { workingSetBytes?: number; usageBytes?: number };
}

/** The pod `namespace/name` in a parsed /stats/summary answer; null when the kubelet does not list it. */
export function podStatOf(summary: unknown, namespace: string, name: string): PodStat | null {
  const pods = (summary as { pods?: SummaryPod[] } | null)?.pods ?? [];
  const p = pods.find((x) => x.podRef?.namespace === namespace && x.podRef?.name === name);
  if (!p) return null;
  const at = p.cpu?.time ? Date.parse(p.cpu.time) : NaN;
  return {
    cpuCoreNanos: p.cpu?.usageCoreNanoSeconds ?? null,
    workingSetBytes: p.memory?.workingSetBytes ?? null,
    usageBytes: p.memory?.usageBytes ?? null,
    at: Number.isFinite(at) ? at : null,
  };
}

/** A pod's figures over a repetition: highest memory, highest CPU rate between two kubelet readings, CPU used in a window. */
export class PodStatTrack {
  peakWorkingSetBytes: number | null = null;
  peakUsageBytes: number | null = null;
  peakCores: number | null = null;
  readonly #cpu: Array<{ cpu: number; at: number }> = [];

  add(s: PodStat): void {
    if (s.workingSetBytes !== null) this.peakWorkingSetBytes = Math.max(this.peakWorkingSetBytes ?? 0, s.workingSetBytes);
    if (s.usageBytes !== null) this.peakUsageBytes = Math.max(this.peakUsageBytes ?? 0, s.usageBytes);
    if (s.cpuCoreNanos === null || s.at === null) return;
    const prev = this.#cpu.at(-1);
    if (prev && s.at <= prev.at) return;
    // A restarted container starts its counter again: no rate across it.
    if (prev && s.cpuCoreNanos >= prev.cpu) this.peakCores = Math.max(this.peakCores ?? 0, (s.cpuCoreNanos - prev.cpu) / 1e6 / (s.at - prev.at));
    this.#cpu.push({ cpu: s.cpuCoreNanos, at: s.at });
  }

  /** CPU seconds from the last reading at or before `from` (else the first) to the last at or before `to`; null without two readings. */
  cpuSeconds(from: number, to: number): number | null {
    const upTo = (t: number) => this.#cpu.filter((r) => r.at <= t).at(-1);
    const a = upTo(from) ?? this.#cpu[0];
    const b = upTo(to);
    if (!a || !b || b.at <= a.at) return null;
    let used = 0;
    // Summed step by step: after a restart's reset the counter is the new container's use.
    for (const [i, r] of this.#cpu.entries()) {
      const prev = this.#cpu[i - 1];
      if (prev && r.at > a.at && r.at <= b.at) used += r.cpu >= prev.cpu ? r.cpu - prev.cpu : r.cpu;
    }
    return used / 1e9;
  }
}

/** One /stats/summary of a node, parsed; null when the node proxy does not answer. */
export async function nodeSummary(kc: KubeConfig, node: string): Promise<unknown> {
  try {
    const text = await kc.makeApiClient(CoreV1Api).connectGetNodeProxyWithPath({ name: node, path: 'stats/summary' });
    return typeof text === 'string' ? JSON.parse(text) : text;
  } catch {
    return null;
  }
}
