// What holds a SPIRE agent's live Go heap, read from the heap profiles a repetition saved
// (spire-heap-<t>ms.pb.gz): the owners' names and words, and the record results.json keeps.

/**
 * Owners of live heap bytes, in the order their rules are tried (src/spire/heap-owners.ts) and the
 * reports list them; `other` takes what no rule claims.
 */
export const SPIRE_HEAP_OWNERS = ['pod-list', 'log-entries', 'read-buffers', 'grpc-client', 'grpc-transport', 'goroutines', 'calls', 'other'] as const;
export type SpireHeapOwner = (typeof SPIRE_HEAP_OWNERS)[number];

/** Each owner in words, for table headings and legends. */
export const SPIRE_HEAP_OWNER_WORDS: Record<SpireHeapOwner, string> = {
  'pod-list': 'parsed pod lists (valyala/fastjson)',
  'read-buffers': 'per-connection read buffers (bufio under gRPC transport)',
  'grpc-transport': 'gRPC server transports, HTTP/2 framing and headers',
  'grpc-client': 'gRPC client streams (workload attestor plugin calls)',
  'log-entries': 'log entries (sirupsen/logrus)',
  calls: 'Workload API calls and connections (gRPC server, SPIRE handlers, attestation)',
  goroutines: 'goroutine descriptors (runtime)',
  other: 'other (start-up tables, metrics, …)',
};

/** One heap profile, summed: inuse_space in bytes, as `go tool pprof -sample_index=inuse_space` totals it. */
export interface SpireHeapProfileSummary {
  /** The profile's file name in the repetition's folder. */
  file: string;
  /** ms on the repetition's timeline (since the calls started) when it was taken. */
  atMs: number;
  totalBytes: number;
  /** Live bytes per owner; they add up to totalBytes. */
  byOwner: Record<SpireHeapOwner, number>;
}

/** One repetition's heap profiles: the one with the largest live heap and the last one taken. */
export interface SpireHeapRecord {
  /** Repetition, counting from 1. */
  rep: number;
  /** Profiles read. */
  profiles: number;
  largest: SpireHeapProfileSummary;
  last: SpireHeapProfileSummary;
  /** Profiles that could not be read, each with why (absent when all could). */
  unreadable?: string[];
}
