// What every workload attestor shares: the error it throws (the server answers Unavailable
// "workload attestation failed") and the hooks it is given.
/** Why attestation failed; stable strings for metrics and tests. */
export type AttestationFailure =
  | 'process-gone' // /proc/<pid> vanished or is unreadable
  | 'exe-too-large' // unix:sha256 asked for a binary above unix.maxExeBytes
  | 'kubelet-unavailable' // kubelet down, slow, non-200, bad JSON or bad token
  | 'pod-not-found'; // the pod/container did not appear in the kubelet list in time

/** Thrown by an attestor; the server answers Unavailable "workload attestation failed". */
export class AttestationError extends Error {
  readonly reason: AttestationFailure;
  readonly attestor: string;
  constructor(attestor: string, reason: AttestationFailure, message: string, options?: { cause?: unknown }) {
    super(`${attestor} attestor: ${message}`, options);
    this.attestor = attestor;
    this.reason = reason;
    this.name = 'AttestationError';
  }
}

export interface AttestorDeps {
  /** Called after every kubelet GET /pods (bytes = body size; 0 on error). */
  onKubeletFetch?(outcome: 'ok' | 'error', bytes: number): void;
  /** Where /etc/passwd and /etc/group are read from (default "/etc"), for user and group names. */
  etcDir?: string;
}
