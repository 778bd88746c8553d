// Where a SPIRE agent's goroutines were, read from the goroutine profiles a repetition saved
// (spire-goroutines-<t>ms.txt.gz, Go's /debug/pprof/goroutine?debug=1): the owners' names and
// words, and the record results.json keeps.

/**
 * Owners of goroutines, in the order their rules are tried (src/spire/goroutine-owners.ts) and the
 * reports list them; `other` takes what no rule claims.
 */
export const SPIRE_GOROUTINE_OWNERS = [
  'kubelet-fetch',
  'pod-list-wait',
  'k8s-attestor',
  'kubelet-http',
  'attestation',
  'handlers',
  'grpc-transport',
  'other',
] as const;
export type SpireGoroutineOwner = (typeof SPIRE_GOROUTINE_OWNERS)[number];

/** Each owner in words, for table headings and legends. */
export const SPIRE_GOROUTINE_OWNER_WORDS: Record<SpireGoroutineOwner, string> = {
  'kubelet-fetch': "the k8s attestor's request to the kubelet being made (the pod-list fetcher's or singleflight's fetch)",
  'pod-list-wait': 'attestations waiting in the k8s attestor for a shared pod list (podListFetcher.fetchNext, singleflight.Do)',
  'k8s-attestor': 'the k8s attestor otherwise: between polls, matching the pod, the fetcher loop',
  'kubelet-http': "the kubelet HTTP client's connections (net/http persistConn read and write loops)",
  attestation: "workload attestation calling its plugins (SPIRE's workload attestor and plugin clients)",
  handlers: 'Workload API handlers and their interceptors (endpoints, peer tracker, rate limiter)',
  'grpc-transport': "gRPC connections' transport goroutines (readers, writers, keepalive, server loops)",
  other: 'other (runtime, managers, telemetry, …)',
};

/** One goroutine profile, counted: goroutines in all and per owner. */
export interface SpireGoroutineProfileSummary {
  /** The profile's file name in the repetition's folder. */
  file: string;
  /** ms on the repetition's timeline (since the calls started) when it was taken. */
  atMs: number;
  total: number;
  /** Goroutines per owner; they add up to total. */
  byOwner: Record<SpireGoroutineOwner, number>;
}

/** One repetition's goroutine profiles: the one with the most goroutines, the last, and every one's counts for charts. */
export interface SpireGoroutineRecord {
  /** Repetition, counting from 1. */
  rep: number;
  profiles: number;
  largest: SpireGoroutineProfileSummary;
  last: SpireGoroutineProfileSummary;
  /** Every readable profile in time order (counts only: a few dozen numbers each). */
  series: SpireGoroutineProfileSummary[];
  /** Profiles that could not be read, each with why (absent when all could). */
  unreadable?: string[];
}
