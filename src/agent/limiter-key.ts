// Registry of limiter key strategies, chosen by name from config (rateLimit.key). Adding one is a
// new limiter-key-<name>.ts and one register line below.
import { ConfigError } from '../errors.js';
import type { KeyStrategyName } from '../contract/index.js';
import type { AgentConfig } from './config.js';
import { createOsUidKeyStrategy } from './limiter-key-os-uid.js';
import { createPodUidKeyStrategyFromConfig } from './limiter-key-pod-uid.js';
import { createSelectorSetKeyStrategy } from './limiter-key-selector-set.js';
import { createSpiffeIdKeyStrategy } from './limiter-key-spiffe-id.js';
import type { KeyStrategy } from './types.js';

export type KeyStrategyFactory = (cfg: AgentConfig) => KeyStrategy;

const factories = new Map<string, KeyStrategyFactory>();

export function registerKeyStrategy(name: string, factory: KeyStrategyFactory): void {
  factories.set(name, factory);
}

export function keyStrategyNames(): string[] {
  return [...factories.keys()];
}

/** Creates the named strategy. Throws ConfigError for an unknown name. */
export function createKeyStrategy(name: KeyStrategyName, cfg: AgentConfig): KeyStrategy {
  const factory = factories.get(name);
  if (!factory) {
    throw new ConfigError(`rateLimit.key must be one of ${keyStrategyNames().join(', ')}, got "${name}"`);
  }
  return factory(cfg);
}

registerKeyStrategy('pod-uid', createPodUidKeyStrategyFromConfig);
registerKeyStrategy('os-uid', createOsUidKeyStrategy);
registerKeyStrategy('selector-set', createSelectorSetKeyStrategy);
registerKeyStrategy('spiffe-id', createSpiffeIdKeyStrategy);
