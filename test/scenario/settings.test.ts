// `--set key.path=value`: a scenario key changed before the scenario is checked, a variant
// addressed by its name, every bad setting named at once.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { applySettings, parseScenario, removeKeys } from '../../src/scenario/index.js';

const doc = {
  name: 's',
  agent: { memoryLimit: '256Mi' },
  variants: [
    { name: 'a', agent: { kind: 'spire', binDirEnv: 'A' } },
    { name: 'b', agent: { kind: 'reference', placement: 'disabled' } },
  ],
};

describe('applySettings', () => {
  it('sets a variant key by the variant name, a shared key, and creates missing mappings', () => {
    const out = applySettings(doc, [
      'variants.a.agent.binDir=/opt/spire/1.15.3',
      'agent.memoryLimit=8Gi',
      'agent.kubelet.latency=100ms',
      'variants.a.agent.rateLimits.fetch_jwt_svid=10',
    ]);
    expect(out.agent).toEqual({ memoryLimit: '8Gi', kubelet: { latency: '100ms' } });
    expect((out.variants as Array<{ agent: unknown }>)[0]!.agent).toEqual({
      kind: 'spire',
      binDirEnv: 'A',
      binDir: '/opt/spire/1.15.3',
      rateLimits: { fetch_jwt_svid: 10 },
    });
    // The input as written is left alone.
    expect(doc.agent.memoryLimit).toBe('256Mi');
    const s = parseScenario(out).scenario;
    expect(s.variants[0]!.agent).toMatchObject({ binDir: '/opt/spire/1.15.3', memoryLimit: 8 * 1024 ** 3 });
  });

  it('names every bad setting at once', () => {
    let err: unknown;
    try {
      applySettings(doc, ['variants.c.agent.binDir=/x', 'nokey', 'variants.a=1', 'name.x=1']);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      '--set variants.c.agent.binDir: variants has no item named "c" (it has a, b)',
      '--set must be key.path=value (e.g. variants.v1-15-3.agent.binDir=/opt/spire/1.15.3), got "nokey"',
      '--set variants.a: variants.a names a whole item of variants; set one of its keys',
      '--set name.x: name is not a mapping',
    ]);
  });

  it('leaves the checking to the scenario schema: a bad value fails there with its path', () => {
    expect(() => parseScenario(applySettings(doc, ['variants.a.agent.binDirEnv=not a name']))).toThrow(/binDirEnv must be an environment variable name/);
  });
});

describe('removeKeys', () => {
  it('removes a variant key by the variant name and a shared key; a path naming nothing is no error; the input is left alone', () => {
    const out = removeKeys(doc, ['variants.a.agent.binDirEnv', 'agent.memoryLimit', 'variants.c.agent.release', 'load.pods']);
    expect((out.variants as Array<{ agent: unknown }>)[0]!.agent).toEqual({ kind: 'spire' });
    expect(out.agent).toEqual({});
    expect(doc.agent.memoryLimit).toBe('256Mi');
    expect(doc.variants[0]!.agent.binDirEnv).toBe('A');
  });
});
