// Registry of workload attestors, chosen by name from config (attestors: [unix, k8s]). Adding one
// is a new attestor-<name>.ts exporting a factory and one register line below.
import { ConfigError } from '../errors.js';
import type { AgentConfig } from './config.js';
import { createK8sAttestor } from './attestor-k8s.js';
import { createUnixAttestor } from './attestor-unix.js';
import type { Attestor } from './types.js';

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

export type AttestorFactory = (cfg: AgentConfig, deps: AttestorDeps) => Attestor;

const factories = new Map<string, AttestorFactory>();

export function registerAttestor(name: string, factory: AttestorFactory): void {
  factories.set(name, factory);
}

export function attestorNames(): string[] {
  return [...factories.keys()];
}

/** One attestor per cfg.attestors entry, in order. Throws ConfigError for an unknown name. */
export function createAttestors(cfg: AgentConfig, deps: AttestorDeps = {}): Attestor[] {
  const unknown = cfg.attestors.filter((n) => !factories.has(n));
  if (unknown.length) {
    throw new ConfigError(unknown.map((n) => `attestors must name registered attestors (${attestorNames().join(', ')}), got "${n}"`));
  }
  return cfg.attestors.map((n) => factories.get(n)!(cfg, deps));
}

// Function declarations in the plugin files: hoisted, so this works whichever module loads first.
registerAttestor('unix', createUnixAttestor);
registerAttestor('k8s', createK8sAttestor);
