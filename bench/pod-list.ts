// Benchmark of the pod list's size: the kubelet emulator's GET /pods body for a small node, the
// default node (~1 MiB) and busy shapes, and what the reference agent pays to fetch, parse and index
// one copy (its kubelet client, unshared, as in older agents: one GET and JSON.parse per lookup).
// The emulator runs in a child process, so this process's CPU time is the agent side alone.
// Numbers, never pass/fail.
//   node --import tsx bench/pod-list.ts [--json]
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createKubeletClient } from '../src/agent/kubelet-client.js';
import { startKubeletEmulator, type KubeletEmulatorOptions } from '../src/sandbox/index.js';
import { STORM_POD_UID as UID, stormPodDoc } from '../test/support/storm-pod.js';

const SHAPES: Array<{ name: string; shape: Partial<KubeletEmulatorOptions> }> = [
  { name: 'small node (10 pods)', shape: { nodePods: 10 } },
  { name: 'default node (110 pods)', shape: {} },
  { name: '110 pods x 4 containers', shape: { containersPerPod: 4 } },
  { name: '110 pods + 300 terminated', shape: { terminatedPods: 300 } },
];

// ---------- emulator side (child process) ----------

async function serve(shape: Partial<KubeletEmulatorOptions>): Promise<void> {
  const own = stormPodDoc();

  const k = await startKubeletEmulator({ podSource: () => [own], ...shape });
  const list = k.podList();
  process.stdout.write(`${JSON.stringify({ url: k.url, bytes: list.bytes, items: list.items })}\n`);
  const stop = () => void k.close().finally(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.stdin.once('end', stop);
  process.stdin.resume();
}

// ---------- agent side (this process) ----------

interface Case {
  name: string;
  bytes: number;
  items: number;
  /** CPU time of one fetch + parse + index, µs: median of the rounds. */
  cpuUsPerFetch: number;
  /** Wall time of one fetch + parse + index, ms: median of the rounds. */
  wallMsPerFetch: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(name: string, shape: Partial<KubeletEmulatorOptions>): Promise<Case> {
  const self = fileURLToPath(import.meta.url);
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', self, '--serve', JSON.stringify(shape)], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`emulator exited (${code}) before it was ready`)));
    });
    const { url, bytes, items } = JSON.parse(line) as { url: string; bytes: number; items: number };
    const client = createKubeletClient({ url, timeoutMs: 30_000, pollIntervalMs: 0, maxPollAttempts: 1, shareFetches: false });
    const once = () => client.waitFor((l) => l.byUid.get(UID), 'the storm pod');
    // Fetches per round: about 50 MiB of bodies, at least 5.
    const perRound = Math.max(5, Math.round((50 * 2 ** 20) / bytes));
    for (let i = 0; i < Math.min(perRound, 20); i++) await once();
    const cpu: number[] = [];
    const wall: number[] = [];
    for (let round = 0; round < 5; round++) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < perRound; i++) await once();
      const c = process.cpuUsage(c0);
      wall.push((performance.now() - t0) / perRound);
      cpu.push((c.user + c.system) / perRound);
    }
    client.close();
    return { name, bytes, items, cpuUsPerFetch: Math.round(median(cpu)), wallMsPerFetch: Math.round(median(wall) * 100) / 100 };
  } finally {
    child.stdin!.end();
    child.kill('SIGTERM');
  }
}

const args = process.argv.slice(2);
if (args[0] === '--serve') {
  await serve(JSON.parse(args[1]!) as Partial<KubeletEmulatorOptions>);
} else {
  const json = args.includes('--json');
  const human = (s: string) => (json ? process.stderr : process.stdout).write(s);
  const cases: Case[] = [];
  for (const { name, shape } of SHAPES) {
    const c = await measure(name, shape);
    cases.push(c);
    human(
      `pod-list ${c.name.padEnd(27)} /pods ${(c.bytes / 2 ** 20).toFixed(2).padStart(6)} MiB (${String(c.items).padStart(3)} pods)  agent fetch+parse+index ${String(c.cpuUsPerFetch).padStart(7)} µs CPU, ${c.wallMsPerFetch.toFixed(2).padStart(7)} ms wall\n`,
    );
  }
  if (json) process.stdout.write(`${JSON.stringify({ podList: cases })}\n`);
}
