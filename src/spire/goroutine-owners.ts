// The goroutines of one SPIRE agent goroutine profile (Go's /debug/pprof/goroutine?debug=1 text:
// each distinct stack once, with how many goroutines stand on it) by owner: each stack's count goes
// to the first rule below that one of its frames matches.
import { ConfigError } from '../errors.js';
import { SPIRE_GOROUTINE_OWNERS, type SpireGoroutineOwner } from '../contract/index.js';

interface OwnerRule {
  owner: SpireGoroutineOwner;
  /** The rule holds when some frame of the stack (any depth) is a function this matches. */
  frame: RegExp;
}

const K8S = String.raw`^github\.com/spiffe/spire/pkg/agent/plugin/workloadattestor/k8s\.`;

/**
 * Rules in the order they are tried. The most specific place a goroutine can be comes first: a
 * goroutine making the kubelet request also holds the frames of the fetcher and of singleflight.Do
 * that every waiter holds, and a handler blocked in attestation holds the handler's frames too. Read
 * from SPIRE's k8s workload attestor: 1.15.3's podListFetcher (fetchNext waits, startFetch's
 * goroutine fetches) and the singleflight group of the releases before (Do waits, doCall fetches).
 */
export const SPIRE_GOROUTINE_RULES: readonly OwnerRule[] = [
  // In SPIRE_GOROUTINE_OWNERS's order (a test holds them to it).
  {
    owner: 'kubelet-fetch',
    frame: new RegExp(
      `${K8S}\\(\\*podListFetcher\\)\\.(startFetch|fetchPodList|parsePodList)|${K8S}\\(\\*kubeletClient\\)\\.|^golang\\.org/x/sync/singleflight\\.\\(\\*Group\\)\\.doCall`,
    ),
  },
  { owner: 'pod-list-wait', frame: new RegExp(`${K8S}\\(\\*podListFetcher\\)\\.fetchNext|^golang\\.org/x/sync/singleflight\\.\\(\\*Group\\)\\.Do$`) },
  { owner: 'k8s-attestor', frame: new RegExp(K8S) },
  { owner: 'kubelet-http', frame: /^net\/http\.\(\*persistConn\)\.|^net\/http\.\(\*Transport\)\./ },
  {
    owner: 'attestation',
    frame:
      /^github\.com\/spiffe\/spire\/pkg\/agent\/(attestor\/workload|plugin\/workloadattestor)[./]|^google\.golang\.org\/grpc\.(\(\*ClientConn\)\.Invoke|invoke$|newClientStream|\(\*clientStream\)|\(\*csAttempt\))/,
  },
  {
    owner: 'handlers',
    frame:
      /^github\.com\/spiffe\/spire\/pkg\/(agent\/endpoints|common\/(peertracker|api\/middleware|telemetry\/server))[./]|^google\.golang\.org\/grpc\.\(\*Server\)\.(handleStream|processUnaryRPC|processStreamingRPC)/,
  },
  { owner: 'grpc-transport', frame: /^google\.golang\.org\/grpc(\/internal\/transport)?\.|^golang\.org\/x\/net\/http2[./]/ },
];

/** The owner of one stack (function names, leaf first). */
export function goroutineOwnerOf(stack: readonly string[]): SpireGoroutineOwner {
  for (const rule of SPIRE_GOROUTINE_RULES) if (stack.some((f) => rule.frame.test(f))) return rule.owner;
  return 'other';
}

/** One distinct stack of a debug=1 goroutine profile: how many goroutines, and its functions leaf first. */
export interface GoroutineStack {
  count: number;
  frames: string[];
}

/**
 * The stacks of a debug=1 goroutine profile. A group is a "<count> @ <pcs>" line followed by
 * "#\t<pc>\t<function>+<offset>\t<file>:<line>" lines; `name` names the input in errors.
 */
export function parseGoroutineProfile(text: string, name: string): { total: number; stacks: GoroutineStack[] } {
  const header = /^goroutine profile: total (\d+)/.exec(text);
  if (!header) throw new ConfigError(`${name} is not a goroutine profile (debug=1 text, starting "goroutine profile: total N")`);
  const stacks: GoroutineStack[] = [];
  let current: GoroutineStack | null = null;
  for (const line of text.split('\n')) {
    const group = /^(\d+) @ /.exec(line);
    if (group) {
      stacks.push((current = { count: Number(group[1]), frames: [] }));
      continue;
    }
    const frame = /^#\s+0x[0-9a-f]+\s+(\S+?)\+0x[0-9a-f]+/.exec(line);
    if (frame && current) current.frames.push(frame[1]!);
    else if (line.trim() === '') current = null;
  }
  return { total: Number(header[1]), stacks };
}

/** Goroutines in all and per owner; the owners add up to the stacks' counts (the header's total may differ by the profiler's own). */
export function goroutinesByOwner(text: string, name: string): { total: number; byOwner: Record<SpireGoroutineOwner, number> } {
  const { stacks } = parseGoroutineProfile(text, name);
  const byOwner = Object.fromEntries(SPIRE_GOROUTINE_OWNERS.map((o) => [o, 0])) as Record<SpireGoroutineOwner, number>;
  let total = 0;
  for (const s of stacks) {
    byOwner[goroutineOwnerOf(s.frames)] += s.count;
    total += s.count;
  }
  return { total, byOwner };
}
