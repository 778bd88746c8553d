import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import {
  parseOverrides,
  parseScenario,
  readScenarioFile,
  scenarioJsonSchemaText,
  scenarioVariantNames,
  selectVariants,
  SCENARIO_JSON_SCHEMA_PATH,
  type ReferenceAgent,
} from '../../src/scenario/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';

function problems(input: unknown, overrides = {}): string[] {
  try {
    parseScenario(input, '', overrides);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected the scenario to be rejected');
}

describe('scenario schema', () => {
  it('fills defaults: three placements, 10/s JWT limit, k8s attestor, kubelet back-off', () => {
    const { scenario } = parseScenario({ name: 'x' });
    expect(scenarioVariantNames(scenario)).toEqual(['pre-attestation', 'post-attestation', 'disabled']);
    const agent = scenario.variants[0]!.agent as ReferenceAgent;
    expect(agent).toMatchObject({ kind: 'reference', placement: 'pre-attestation' });
    expect(agent.rateLimits.fetch_jwt_svid).toBe(10);
    expect(agent.attestors).toEqual(['k8s']);
    expect(agent.memoryLimit).toBe(128 * 2 ** 20);
    expect(agent.restart).toEqual({ initialBackoff: 10_000, maxBackoff: 300_000, resetAfter: 600_000 });
    expect(agent.keys).toEqual({ 'pre-attestation': 'pod-uid', 'post-attestation': 'selector-set' });
    expect(agent.model).toEqual({});
    expect(scenario.load.connection).toBe('per-call');
    expect(scenario.duration).toBe(30_000);
  });

  it('names every bad key by path with its rule and the value given', () => {
    const p = problems({
      name: 'Bad Name',
      duration: 'soon',
      repetitions: 0,
      agent: { memoryLimit: '12Q', cpu: { mode: 'turbo' }, rateLimits: { fetch_jwt_svid: -1 } },
      load: { workersPerPod: 0, pods: 1.5, rate: 0, deadline: 'x', connection: 'sometimes', methods: { FetchJWTSVID: 0 } },
      expect: { disabled: { maxPeakMemory: 'lots', minOkRps: -1, oomKilled: 'yes' } },
      bogus: 1,
    });
    const want = [
      'name must be lowercase letters, digits and "-", got "Bad Name"',
      'duration must be a duration like 500ms, 30s or 2m, got "soon"',
      'repetitions must be a positive integer, got 0',
      'agent.memoryLimit must be a size like 128Mi, 1Gi or a byte count, got "12Q"',
      'agent.rateLimits.fetch_jwt_svid must be a non-negative integer, got -1',
      'load.workersPerPod must be a positive integer, got 0',
      'load.pods must be a positive integer, got 1.5',
      'load.rate must be a positive number, got 0',
      'load.deadline must be a duration like 500ms, 30s or 2m, got "x"',
      'load.methods.FetchJWTSVID must be a positive integer weight, got 0',
      'expect.disabled.maxPeakMemory must be a size like 128Mi, 1Gi or a byte count, got "lots"',
    ];
    for (const w of want) expect(p).toContain(w);
    expect(p.some((x) => x.startsWith('agent.cpu.mode') && x.includes('"turbo"'))).toBe(true);
    expect(p.some((x) => x.startsWith('load.connection') && x.includes('"sometimes"'))).toBe(true);
    expect(p.some((x) => x.startsWith('expect.disabled.minOkRps') && x.includes('-1'))).toBe(true);
    expect(p.some((x) => x.startsWith('expect.disabled.oomKilled') && x.includes('"yes"'))).toBe(true);
    expect(p.some((x) => x.includes('unknown key(s) bogus'))).toBe(true);
  });

  it('checks placements against expectations, ratios and targets', () => {
    expect(problems({ name: 'x', placements: ['disabled', 'disabled'] })).toContain('placements must not repeat a placement, got ["disabled","disabled"]');
    expect(problems({ name: 'x', placements: ['disabled'], expect: { 'pre-attestation': { oomKilled: false } } })).toEqual([
      'expect.pre-attestation names a variant this scenario does not run (runs disabled), got "pre-attestation"',
    ]);
    expect(
      problems({
        name: 'x',
        placements: ['pre-attestation', 'disabled'],
        expect: { 'pre-attestation': { maxPeakRatio: { to: 'post-attestation', value: 0.6 } } },
      }),
    ).toEqual(['expect.pre-attestation.maxPeakRatio.to must be a variant this scenario runs (pre-attestation, disabled), got "post-attestation"']);
    expect(problems({ name: 'x', expect: { disabled: { minPeakRatio: { to: 'disabled', value: 1 } } } })).toEqual([
      'expect.disabled.minPeakRatio.to must name another variant, got "disabled"',
    ]);
    expect(problems({ name: 'x', placements: ['external'] })).toEqual(['placements may contain "external" only together with a target, got "external"']);
    expect(problems({ name: 'x', target: { socket: '/s' } })).toEqual(["target must name the agent's pid or cgroup so its memory can be sampled, got neither"]);
    expect(problems({ name: 'x', target: { socket: '/s', pid: 1 }, placements: ['disabled'] })[0]).toMatch(/^placements must be \[external\] with a target/);
    const ext = parseScenario({ name: 'x', target: { socket: '/s', pid: 1 } }).scenario;
    expect(scenarioVariantNames(ext)).toEqual(['external']);
    expect(ext.variants[0]!.agent).toMatchObject({ kind: 'external', socket: '/s', pid: 1 });
  });

  it('variants: per-kind settings merged over the shared agent, checked against their kind', () => {
    const { scenario } = parseScenario({
      name: 'x',
      agent: { memoryLimit: '192Mi', rateLimits: { fetch_jwt_svid: 10 }, k8s: { shareFetches: false, pollInterval: '250ms' } },
      variants: [
        { name: 'ref-pre', agent: { kind: 'reference', placement: 'pre-attestation', key: 'os-uid' } },
        { name: 'ref-off', agent: { placement: 'disabled', memoryLimit: '1Gi' } },
        { name: 'spire-limited', agent: { kind: 'spire', rateLimits: { fetch_jwt_svid: 10 } } },
        { name: 'spire-off', agent: { kind: 'spire' } },
      ],
      expect: { 'ref-pre': { oomKilled: false, maxPeakRatio: { to: 'ref-off', value: 0.6 } } },
    });
    const [pre, off, limited, spireOff] = scenario.variants;
    expect(pre!.agent).toMatchObject({
      kind: 'reference',
      placement: 'pre-attestation',
      key: 'os-uid',
      memoryLimit: 192 * 2 ** 20,
      rateLimits: { fetch_jwt_svid: 10 },
    });
    expect(off!.agent).toMatchObject({ kind: 'reference', placement: 'disabled', memoryLimit: 2 ** 30 });
    expect(limited!.agent).toMatchObject({
      kind: 'spire',
      memoryLimit: 192 * 2 ** 20,
      rateLimits: { fetch_jwt_svid: 10 },
      k8s: { pollInterval: 250, maxPollAttempts: 60 },
    });
    // A SPIRE variant's limiter is what is compared: never inherited from the shared block.
    expect((spireOff!.agent as { rateLimits?: unknown }).rateLimits).toBeUndefined();
  });

  it('variants: every error names the variant, the key and the rule', () => {
    const p = problems({
      name: 'x',
      variants: [
        { name: 'a', agent: { kind: 'reference' } },
        { name: 'a', agent: { kind: 'spire', placement: 'pre-attestation' } },
        { name: 'Bad', agent: { kind: 'reference', placement: 'pre-attestation', key: 'selector-set' } },
        { name: 'ext', agent: { kind: 'external' } },
      ],
      expect: { nope: { oomKilled: false } },
    });
    expect(p).toContain('variants[0].agent.placement must be one of pre-attestation, post-attestation, disabled for a reference agent, got nothing');
    expect(p).toContain('variants[1].name must be unique, got "a" twice');
    expect(p).toContain('variants[1].agent.placement is not a setting of a spire agent, got "pre-attestation"');
    expect(p).toContain('variants[2].name must be lowercase letters, digits and "-", got "Bad"');
    expect(p.some((x) => x.startsWith('variants[3].agent.socket'))).toBe(true);
    expect(p.some((x) => x.startsWith('expect.nope names a variant this scenario does not run'))).toBe(true);
    expect(problems({ name: 'x', placements: ['disabled'], variants: [{ name: 'a', agent: { placement: 'disabled' } }] })).toEqual([
      'placements must not be given together with variants (it is a shorthand for them), got ["disabled"]',
    ]);
    // A shared setting that is wrong is reported once, not once per variant.
    expect(problems({ name: 'x', agent: { memoryLimit: '12Q' } })).toEqual(['agent.memoryLimit must be a size like 128Mi, 1Gi or a byte count, got "12Q"']);
  });

  it('selecting a subset of variants drops, and names, the expectations that cannot apply', () => {
    const { scenario } = readScenarioFile(join(PROJECT_ROOT, 'scenarios', 'quick.yaml'));
    const { scenario: sub, dropped } = selectVariants(scenario, ['pre-attestation']);
    expect(scenarioVariantNames(sub)).toEqual(['pre-attestation']);
    expect(dropped.length).toBeGreaterThan(0);
    expect(Object.keys(sub.expect)).toEqual(['pre-attestation']);
    expect(() => selectVariants(scenario, ['nope'])).toThrow(/--variants: "nope" is not a variant of quick/);
  });

  it('applies CLI overrides with the same rules as the YAML keys', () => {
    const o = parseOverrides({ duration: '5s', repetitions: undefined });
    const { scenario } = parseScenario({ name: 'x' }, '', o);
    expect(scenario.duration).toBe(5000);
    expect(() => parseOverrides({ duration: 'never' })).toThrow('--duration must be a duration like 500ms, 30s or 2m, got "never"');
    expect(() => parseOverrides({ repetitions: 0 })).toThrow('--repetitions must be a positive integer, got 0');
  });

  it('rejects non-mappings and unreadable files', () => {
    expect(problems([1, 2])).toEqual(['must be a YAML mapping of scenario keys, got a list']);
    expect(() => readScenarioFile('/nonexistent/s.yaml')).toThrow(/cannot read the scenario file/);
  });

  it('the committed JSON Schema is the generated one', () => {
    expect(readFileSync(SCENARIO_JSON_SCHEMA_PATH, 'utf8')).toBe(scenarioJsonSchemaText());
  });

  it('every shipped scenario is valid and references the JSON Schema', () => {
    const dir = join(PROJECT_ROOT, 'scenarios');
    const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
    expect(files).toContain('quick.yaml');
    for (const f of files) {
      const text = readFileSync(join(dir, f), 'utf8');
      expect(text.split('\n')[0], f).toBe('# yaml-language-server: $schema=./scenario.schema.json');
      const loaded = readScenarioFile(join(dir, f));
      expect(loaded.scenario.name, f).toBe(f.replace(/\.yaml$/, ''));
      expect(loaded.scenario.description.length, f).toBeGreaterThan(20);
    }
  });
});
