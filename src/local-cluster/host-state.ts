// Reading what the cluster left on the host, from /proc and /sys (pure parsers plus their readers):
// mounts under the cluster's folders, listening ports, the kubelet's cgroups, firewall chains,
// containerd's network namespaces. `down` and `up`'s checks both use these.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseMountinfo } from '../util/index.js';

export { parseMountinfo };

/** Mount points at or below any prefix, deepest first (the order they must be unmounted in). */
export function mountsUnder(mounts: Array<{ mountPoint: string }>, prefixes: string[]): string[] {
  const hit = mounts.map((m) => m.mountPoint).filter((p) => prefixes.some((pre) => p === pre || p.startsWith(`${pre.replace(/\/$/, '')}/`)));
  return [...new Set(hit)].sort((a, b) => b.split('/').length - a.split('/').length || b.localeCompare(a));
}

export function readMounts(): Array<{ mountPoint: string; fsType: string }> {
  return parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8'));
}

/** Local ports in LISTEN state from /proc/net/tcp or tcp6 text. */
export function listeningPorts(text: string): Set<number> {
  const ports = new Set<number>();
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 4 || f[3] !== '0A') continue;
    const port = parseInt(f[1]!.split(':').pop()!, 16);
    if (Number.isFinite(port)) ports.add(port);
  }
  return ports;
}

export function readListeningPorts(): Set<number> {
  const all = new Set<number>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    try {
      for (const p of listeningPorts(readFileSync(f, 'utf8'))) all.add(p);
    } catch {
      // No IPv6 on this host.
    }
  }
  return all;
}

/** Roots of the kubelet's pod cgroups (cgroupfs driver): `<hierarchy>/kubepods` in every mounted hierarchy. */
export function kubepodsCgroups(mounts = readMounts()): string[] {
  const roots = new Set(mounts.filter((m) => m.fsType === 'cgroup' || m.fsType === 'cgroup2').map((m) => m.mountPoint));
  return [...roots].map((r) => join(r, 'kubepods')).filter((p) => existsSync(p));
}

/** Every cgroup directory below `root`, deepest first (rmdir order). */
export function cgroupTree(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries: string[];
    try {
      entries = readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      return;
    }
    for (const e of entries) walk(join(dir, e));
    out.push(dir);
  };
  walk(root);
  return out;
}

/** `table:chain` for every chain in iptables-save output. */
export function parseChains(save: string): string[] {
  const chains: string[] = [];
  let table = '';
  for (const line of save.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1).trim();
    else if (line.startsWith(':')) chains.push(`${table}:${line.slice(1).split(' ')[0]}`);
  }
  return chains;
}

/** Chains the kubelet and CNI plugins create. */
const CLUSTER_CHAIN = /^(KUBE-|CNI-)/;

/**
 * The iptables invocations that remove chains added since `baseline` (kubelet's KUBE-*, CNI's
 * CNI-*): first the rules that jump to them (from any chain), then flush, then delete.
 */
export function firewallCleanupPlan(save: string, baseline: string[]): string[][] {
  const before = new Set(baseline);
  const added = parseChains(save).filter((c) => !before.has(c) && CLUSTER_CHAIN.test(c.split(':')[1]!));
  if (!added.length) return [];
  const addedSet = new Set(added);
  const plan: string[][] = [];
  let table = '';
  for (const line of save.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1).trim();
    if (!line.startsWith('-A ')) continue;
    const words = line.split(' ');
    const target = words[words.indexOf('-j') + 1] ?? words[words.indexOf('-g') + 1];
    const own = `${table}:${words[1]}`;
    // Rules inside an added chain go with its flush; rules elsewhere that jump into one are deleted.
    if (!addedSet.has(own) && target && addedSet.has(`${table}:${target}`)) plan.push(['-t', table, '-D', ...splitRule(line.slice(3))]);
  }
  for (const c of added) plan.push(['-t', c.split(':')[0]!, '-F', c.split(':')[1]!]);
  for (const c of added) plan.push(['-t', c.split(':')[0]!, '-X', c.split(':')[1]!]);
  return plan;
}

/** Splits an iptables-save rule into argv, honouring double quotes (comments). */
export function splitRule(rule: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (const m of rule.matchAll(re)) out.push(m[1] !== undefined ? m[1].replace(/\\"/g, '"') : m[2]!);
  return out;
}

/** containerd's CRI network namespaces (`cni-<uuid>` under /run/netns). */
export function criNetns(dir = '/run/netns'): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => n.startsWith('cni-'))
      .map((n) => join(dir, n));
  } catch {
    return [];
  }
}

/** PIDs whose command line names containerd's shim for our socket (they outlive containerd). */
export function shimPids(socket: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv[0]?.includes('containerd-shim') && argv.includes(socket)) out.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}
