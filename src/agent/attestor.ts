// Registry of workload attestors, chosen by name from config (attestors: [unix, k8s]). Adding one
// is a new attestor-<name>.ts exporting a factory and one register line below.
import { ConfigError } from '../errors.js';
import type { AgentConfig } from './config.js';
import { createK8sAttestor } from './attestor-k8s.js';
import { createUnixAttestor } from './attestor-unix.js';
import type { AttestorDeps } from './attestation-error.js';
import type { Attestor } from './types.js';

export { AttestationError } from './attestation-error.js';
export type { AttestationFailure, AttestorDeps } from './attestation-error.js';

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
