// `cluster down`, and the cleaning `up` does first when an earlier cluster was killed: stop the
// daemons by record, kill what runs in the kubelet's pod cgroups and containerd's shims, then
// remove mounts, network namespaces, the bridge and its veths, pod cgroups and the firewall chains
// the kubelet added, restore the sysctls, and delete the state. Every step works without a state
// file too (the cluster's folders and names are fixed), so a SIGKILLed `up` is cleaned as well.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stopDaemon } from './daemons.js';
import { cgroupTree, criNetns, firewallCleanupPlan, kubepodsCgroups, mountsUnder, parseChains, readMounts, shimPids } from './host-state.js';
import { BRIDGE, type ClusterLayout } from './layout.js';
import { sh } from './sh.js';
import { isOurs, procfs, readState, type ClusterState } from './state.js';
import { restoreSysctls } from './sysctl.js';

const SOCKET_PARENT = '/run/attestorm';

/** Kubernetes-mode runs' socket directories on this node (hostPath /run/attestorm/<namespace>). */
function runSocketDirs(): string[] {
  try {
    return readdirSync(SOCKET_PARENT)
      .filter((n) => n.startsWith('atst-'))
      .map((n) => join(SOCKET_PARENT, n));
  } catch {
    return [];
  }
}

/** What is still on the host of a cluster; empty when nothing is. */
export interface Leftovers {
  daemons: string[];
  shims: number[];
  mounts: string[];
  netns: string[];
  links: string[];
  cgroups: string[];
  chains: string[];
  /** Runs' socket directories (/run/attestorm/atst-*): hostPaths on this node. */
  socketDirs: string[];
}

export function leftoverCount(l: Leftovers): number {
  return (Object.values(l) as unknown[][]).reduce((n, v) => n + v.length, 0);
}

export function describeLeftovers(l: Leftovers): string[] {
  const out: string[] = [];
  if (l.daemons.length) out.push(`daemons running: ${l.daemons.join(', ')}`);
  if (l.shims.length) out.push(`containerd shims: pids ${l.shims.join(', ')}`);
  if (l.mounts.length) out.push(`${l.mounts.length} mount(s), e.g. ${l.mounts[0]}`);
  if (l.netns.length) out.push(`network namespaces: ${l.netns.join(', ')}`);
  if (l.links.length) out.push(`network interfaces: ${l.links.join(', ')}`);
  if (l.cgroups.length) out.push(`cgroups: ${l.cgroups.join(', ')}`);
  if (l.chains.length) out.push(`firewall chains: ${l.chains.join(', ')}`);
  if (l.socketDirs.length) out.push(`run socket directories: ${l.socketDirs.join(', ')}`);
  return out;
}

async function clusterLinks(): Promise<string[]> {
  const r = await sh('ip', ['-o', 'link', 'show'], { allowFail: true });
  const links: string[] = [];
  for (const line of r.stdout.split('\n')) {
    const m = /^\d+: ([^:@]+)[@:].*/.exec(line);
    if (!m) continue;
    if (m[1] === BRIDGE || line.includes(` master ${BRIDGE} `)) links.push(m[1]!);
  }
  return links;
}

async function addedChains(baseline: ClusterState['firewallChains'] | undefined): Promise<{ v4: string[][]; v6: string[][]; names: string[] }> {
  const out = { v4: [] as string[][], v6: [] as string[][], names: [] as string[] };
  for (const fam of ['v4', 'v6'] as const) {
    const save = await sh(fam === 'v4' ? 'iptables-save' : 'ip6tables-save', [], { allowFail: true }).catch(() => null);
    if (!save || save.code !== 0) continue;
    out[fam] = firewallCleanupPlan(save.stdout, baseline?.[fam] ?? []);
    const before = new Set(baseline?.[fam] ?? []);
    out.names.push(
      ...parseChains(save.stdout)
        .filter((c) => !before.has(c) && /^(KUBE-|CNI-)/.test(c.split(':')[1]!))
        .map((c) => `${fam}:${c}`),
    );
  }
  return out;
}

export async function findLeftovers(l: ClusterLayout, state = readState(l.stateFile)): Promise<Leftovers> {
  const netnsMounts = criNetns();
  return {
    daemons: (state?.daemons ?? []).filter((d) => isOurs(d)).map((d) => `${d.name} (pid ${d.pid})`),
    shims: shimPids(l.containerdSocket),
    mounts: mountsUnder(readMounts(), [l.stateDir, l.runDir, ...netnsMounts]),
    netns: netnsMounts,
    links: await clusterLinks(),
    cgroups: kubepodsCgroups(),
    chains: (await addedChains(state?.firewallChains)).names,
    socketDirs: runSocketDirs(),
  };
}

function cgroupProcs(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** SIGKILLs every process in the kubelet's pod cgroups, then removes the cgroups bottom-up. */
async function clearPodCgroups(log: (s: string) => void): Promise<void> {
  for (let round = 0; round < 50; round++) {
    const pids = kubepodsCgroups().flatMap((root) => cgroupTree(root).flatMap(cgroupProcs));
    if (!pids.length) break;
    if (round === 0) log(`killing ${new Set(pids).size} pod process(es)`);
    for (const pid of new Set(pids)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await sleep(100);
  }
  for (const root of kubepodsCgroups()) {
    for (const dir of cgroupTree(root)) {
      for (let i = 0; i < 20; i++) {
        try {
          rmdirSync(dir);
          break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') break;
          await sleep(100); // a process is still exiting
        }
      }
    }
  }
}

async function killShims(socket: string): Promise<void> {
  for (let round = 0; round < 30; round++) {
    const pids = shimPids(socket);
    if (!pids.length) return;
    for (const pid of pids) {
      if (!procfs.exe(pid)?.includes('containerd-shim')) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await sleep(100);
  }
}

async function unmountAll(prefixes: string[]): Promise<void> {
  for (let round = 0; round < 3; round++) {
    const mounts = mountsUnder(readMounts(), prefixes);
    if (!mounts.length) return;
    for (const m of mounts) {
      const r = await sh('umount', [m], { allowFail: true });
      if (r.code !== 0) await sh('umount', ['-l', m], { allowFail: true });
    }
  }
}

/** Tears the cluster down, whatever state it is in; returns what could not be removed. */
export async function teardownCluster(l: ClusterLayout, log: (s: string) => void): Promise<Leftovers> {
  const state = readState(l.stateFile);
  const byName = (n: string) => state?.daemons.filter((d) => d.name === n) ?? [];
  // The kubelet first, so it restarts nothing; then the control plane's controllers.
  for (const name of ['kubelet', 'kube-scheduler', 'kube-controller-manager']) for (const d of byName(name)) log(`${name}: ${await stopDaemon(d)}`);
  await clearPodCgroups(log);
  await killShims(l.containerdSocket);
  for (const name of ['containerd', 'kube-apiserver', 'etcd']) for (const d of byName(name)) log(`${name}: ${await stopDaemon(d)}`);
  await killShims(l.containerdSocket);
  const netns = criNetns();
  await unmountAll([l.stateDir, l.runDir, ...netns, ...[l.kubeletRoot]]);
  for (const ns of criNetns()) rmSync(ns, { force: true });
  for (const link of (await clusterLinks()).filter((n) => n !== BRIDGE)) await sh('ip', ['link', 'delete', link], { allowFail: true });
  if ((await clusterLinks()).includes(BRIDGE)) await sh('ip', ['link', 'delete', BRIDGE], { allowFail: true });
  await clearPodCgroups(log);
  // The node goes: so do the runs' hostPath socket directories on it.
  for (const d of runSocketDirs()) rmSync(d, { recursive: true, force: true });
  try {
    rmdirSync(SOCKET_PARENT);
  } catch {
    // not empty (someone else's) or absent
  }
  const chains = await addedChains(state?.firewallChains);
  for (const args of chains.v4) await sh('iptables', args, { allowFail: true });
  for (const args of chains.v6) await sh('ip6tables', args, { allowFail: true });
  if (state) for (const line of restoreSysctls(state.sysctls)) log(`sysctl ${line}`);
  const left = await findLeftovers(l, state);
  if (leftoverCount(left) === 0) {
    // Logs of the last cluster are kept beside the cache for a post-mortem; the rest goes.
    const keep = join(l.cacheDir, 'last-logs');
    if (existsSync(l.logsDir)) {
      rmSync(keep, { recursive: true, force: true });
      try {
        renameSync(l.logsDir, keep);
      } catch {
        // another filesystem: the logs go with the state
      }
    }
    rmSync(l.stateDir, { recursive: true, force: true });
    rmSync(l.runDir, { recursive: true, force: true });
  }
  return left;
}

/** True when an earlier cluster left anything (a state file or any host leftover). */
export async function anythingLeft(l: ClusterLayout): Promise<boolean> {
  return (
    existsSync(l.stateFile) ||
    existsSync(l.runDir) ||
    (existsSync(l.stateDir) && readdirSync(l.stateDir).length > 0) ||
    leftoverCount(await findLeftovers(l)) > 0
  );
}
