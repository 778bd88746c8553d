import { describe, expect, it } from 'vitest';
import { parseAgentConfig } from '../../src/agent/index.js';
import { DEFAULT_KEYS_IN_WORDS, keyInEffect, keyRuleProblem, keysAllowed } from '../../src/contract/index.js';
import { parseScenario, type ReferenceAgent } from '../../src/scenario/index.js';
import { configProblems } from '../support/config-problems.js';

describe('limiter vocabulary', () => {
  it('lets a limiter before attestation key only on what is known at accept', () => {
    expect(keysAllowed('pre-attestation')).toEqual(['pod-uid', 'os-uid']);
    expect(keysAllowed('post-attestation')).toEqual(['pod-uid', 'os-uid', 'selector-set', 'spiffe-id']);
    expect(keyRuleProblem('pre-attestation', 'spiffe-id', 'placement')).toBe(
      'must be pod-uid or os-uid when placement is pre-attestation (spiffe-id is made from attestation results, and this limiter decides before attestation), got "spiffe-id"',
    );
    expect(keyRuleProblem('post-attestation', 'spiffe-id', 'placement')).toBeNull();
    expect(keyRuleProblem('pre-attestation', 'nope')).toBe('must be pod-uid or os-uid, got "nope"');
    // A placement without a limiter ignores its key.
    expect(keyRuleProblem('disabled', 'selector-set', 'placement')).toBeNull();
  });

  it('gives each placement its default key, and none without a limiter', () => {
    expect(keyInEffect('pre-attestation', undefined)).toBe('pod-uid');
    expect(keyInEffect('post-attestation', undefined)).toBe('selector-set');
    expect(keyInEffect('pre-attestation', 'os-uid')).toBe('os-uid');
    expect(keyInEffect('disabled', 'os-uid')).toBeNull();
    expect(DEFAULT_KEYS_IN_WORDS).toBe('default pod-uid before attestation, selector-set after attestation');
  });

  it('is the one rule of the agent config and of a scenario variant', () => {
    for (const key of ['selector-set', 'spiffe-id'] as const) {
      expect(configProblems(() => parseAgentConfig({ rateLimit: { placement: 'pre-attestation', key } }))).toEqual([
        `rateLimit.key ${keyRuleProblem('pre-attestation', key, 'rateLimit.placement')}`,
      ]);
      expect(configProblems(() => parseScenario({ name: 'x', variants: [{ name: 'pre', agent: { placement: 'pre-attestation', key } }] }))).toContain(
        `variants[0].agent.key ${keyRuleProblem('pre-attestation', key, 'placement')}`,
      );
      expect(configProblems(() => parseScenario({ name: 'x', agent: { keys: { 'pre-attestation': key } } }))).toContain(
        `agent.keys.pre-attestation must be pod-uid or os-uid (${key} is made from attestation results, and this limiter decides before attestation), got "${key}"`,
      );
    }
    expect(parseAgentConfig({ rateLimit: { placement: 'post-attestation', key: 'spiffe-id' } }).rateLimit.key).toBe('spiffe-id');
    const { scenario } = parseScenario({ name: 'x', variants: [{ name: 'pre', agent: { placement: 'pre-attestation', key: 'os-uid' } }] });
    expect((scenario.variants[0]!.agent as ReferenceAgent).key).toBe('os-uid');
  });
});
