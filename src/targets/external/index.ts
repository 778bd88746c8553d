// An agent already running as a target kind: stormed and watched, never started, restarted or
// moved; its limiter is whatever it has (unknown here), and it lives on this machine only.
import { ConfigError } from '../../errors.js';
import { externalCapabilities } from '../../fault/index.js';
import { defineTargetKind } from '../kind.js';
import { externalTarget } from './local.js';
import { externalAgentSchema, externalInherits, externalSharedShape, type ExternalAgent } from './schema.js';

export const externalKind = defineTargetKind<ExternalAgent>({
  kind: 'external',
  summary: 'external: an agent already running',
  schema: externalAgentSchema,
  shared: externalSharedShape,
  inherits: externalInherits,
  limiter: () => ({ placement: null, key: null }),
  started: false,
  pinnable: false,
  cpu: () => null,
  kubelet: () => null,
  socket: (a) => a.socket,
  faults: (variant, a) => externalCapabilities(variant, { pid: a.pid ?? null, cgroup: a.cgroup ?? null }),
  start: (a, ctx) => externalTarget(a, ctx),
  cluster: (a, variant) => {
    throw new ConfigError(`variants.${variant}: an external agent (socket ${a.socket} on this machine) cannot run in kind mode; run this variant locally`);
  },
});

export type { ExternalAgent } from './schema.js';
