// The live heap of one SPIRE agent heap profile (Go's /debug/pprof/heap, gzipped profile.proto)
// by owner: each sample's inuse_space goes to the first rule below that its stack matches.
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { ConfigError } from '../errors.js';
import { SPIRE_HEAP_OWNERS, type SpireHeapOwner } from '../contract/index.js';

interface OwnerRule {
  owner: SpireHeapOwner;
  /** The rule holds when some frame of the stack (any depth) is a function this matches ... */
  frame: RegExp;
  /** ... and, when given, the allocating function itself (the leaf) matches this. */
  leaf?: RegExp;
}

const GRPC_TRANSPORT = /^google\.golang\.org\/grpc\/internal\/transport\./;

/**
 * Rules in the order they are tried; the first whose frames a stack holds owns the sample. The
 * libraries that allocate come first and the frameworks that call them after, so an allocation is
 * charged to the most specific owner on its stack wherever that sits: fastjson's tree under the
 * attestor's fetch goroutine is the pod list, a logrus entry made inside a gRPC handler is a log
 * entry, grpc's bufio.NewReaderSize is a read buffer and not the transport that asked for it. The
 * client side of gRPC (the agent's in-process calls to its workload attestor plugins) is tried
 * before the transport in general, whose frames it shares. Read from SPIRE 1.16.0-dev's profiles
 * under a storm (test/spire/fixtures/heap).
 */
export const SPIRE_HEAP_RULES: readonly OwnerRule[] = [
  // In SPIRE_HEAP_OWNERS's order (a test holds them to it).
  { owner: 'pod-list', frame: /^github\.com\/valyala\/fastjson\./ },
  { owner: 'log-entries', frame: /^github\.com\/sirupsen\/logrus\./ },
  { owner: 'read-buffers', frame: GRPC_TRANSPORT, leaf: /^bufio\.NewReaderSize$/ },
  {
    owner: 'grpc-client',
    frame:
      /^google\.golang\.org\/grpc\/internal\/transport\.(\(\*http2Client\)|NewHTTP2Client|\(\*ClientStream\))|^google\.golang\.org\/grpc\.(\(\*ClientConn\)\.Invoke|invoke$|newClientStream|\(\*clientStream\)|\(\*csAttempt\))/,
  },
  { owner: 'grpc-transport', frame: /^google\.golang\.org\/grpc\/internal\/transport\.|^golang\.org\/x\/net\/http2[./]/ },
  { owner: 'goroutines', frame: /^runtime\.(malg|newproc1|allgadd)$/ },
  {
    owner: 'calls',
    frame:
      /^google\.golang\.org\/grpc\.\(\*Server\)\.|^github\.com\/spiffe\/spire\/pkg\/(agent\/(endpoints|attestor\/workload|plugin\/workloadattestor)|common\/peertracker)[./]/,
  },
];

/** A profile's live heap: inuse_space in bytes, in all and per owner. */
export interface HeapByOwner {
  totalBytes: number;
  byOwner: Record<SpireHeapOwner, number>;
}

/** The owner of one stack (function names, leaf first). */
export function heapOwnerOf(stack: readonly string[]): SpireHeapOwner {
  for (const rule of SPIRE_HEAP_RULES) {
    if (rule.leaf && !rule.leaf.test(stack[0] ?? '')) continue;
    if (stack.some((f) => rule.frame.test(f))) return rule.owner;
  }
  return 'other';
}

/**
 * Sums a heap profile (gzipped, as Go serves it; plain profile.proto is read too) by owner. Go's
 * writer has already scaled the sampled values, so the sums are what pprof's -top totals. `name`
 * names the input in errors.
 */
export function heapByOwner(data: Uint8Array, name: string): HeapByOwner {
  let profile: Profile;
  try {
    profile = Profile.decode(data[0] === 0x1f && data[1] === 0x8b ? gunzipSync(data) : data);
  } catch (err) {
    throw new ConfigError(`${name} is not a pprof profile (gzipped profile.proto): ${(err as Error).message}`, { cause: err });
  }
  const strings = profile.stringTable.strings;
  const column = profile.sampleType.findIndex((t) => strings[Number(t.type)] === 'inuse_space');
  if (column < 0) {
    const types = profile.sampleType.map((t) => strings[Number(t.type)]).join(', ') || 'none';
    throw new ConfigError(`${name} has no inuse_space samples (sample types: ${types}): a heap profile from /debug/pprof/heap is needed`);
  }
  const functions = new Map(profile.function.map((f) => [Number(f.id), strings[Number(f.name)] ?? '']));
  // A location's lines run from the innermost inlined function out to the one it was inlined into.
  const frames = new Map(profile.location.map((l) => [Number(l.id), l.line.map((line) => functions.get(Number(line.functionId)) ?? '')]));
  const byOwner = Object.fromEntries(SPIRE_HEAP_OWNERS.map((o) => [o, 0])) as Record<SpireHeapOwner, number>;
  let totalBytes = 0;
  for (const sample of profile.sample) {
    const bytes = Number(sample.value[column] ?? 0);
    if (bytes === 0) continue;
    const stack = sample.locationId.flatMap((id) => frames.get(Number(id)) ?? []);
    byOwner[heapOwnerOf(stack)] += bytes;
    totalBytes += bytes;
  }
  return { totalBytes, byOwner };
}
