import { describe, expect, it } from 'vitest';
import { readScenarioFile } from '../../src/scenario/index.js';
import { boundaries, parseVary, renderSweepHtml, sweepOrder, numericValue, validateSweep, type SweepPoint, type SweepResult } from '../../src/sweep/index.js';
import { configProblems } from '../support/config-problems.js';

const problems = configProblems;

const point = (value: string, variant: string, oomKills: number): SweepPoint => ({
  value,
  numeric: numericValue(value),
  variant,
  peakMemoryBytes: 100 * 2 ** 20,
  peakMinBytes: 100 * 2 ** 20,
  peakMaxBytes: 100 * 2 ** 20,
  memoryLimitBytes: 192 * 2 ** 20,
  oomKills,
  restarts: oomKills,
  okRps: 1,
  rejectedRps: 2,
  bystanderSuccess: null,
  verdict: 'passed',
  runDir: `x=${value}`,
});

describe('sweep input', () => {
  it('--vary names the key and the rule', () => {
    expect(parseVary('load.workersPerPod=10, 20,40')).toEqual({ key: 'load.workersPerPod', values: ['10', '20', '40'] });
    expect(() => parseVary('load.workersPerPod')).toThrow(/--vary must be <key>=<v1>,<v2>/);
    expect(() => parseVary('load.workersPerPod=')).toThrow('--vary load.workersPerPod: give at least one value, got none');
    expect(() => parseVary('a b=1')).toThrow(/dotted scenario key/);
    expect(() => parseVary('x=1,1')).toThrow('--vary x: values must not repeat, got 1,1');
  });

  it('every value is validated against the scenario before anything runs', () => {
    const base = readScenarioFile('scenarios/quick.yaml');
    expect(problems(() => validateSweep({ base, vary: { key: 'load.workersPerPod', values: ['10', '0', 'many'] } }))).toEqual([
      '--vary load.workersPerPod=0: load.workersPerPod must be a positive integer, got 0',
      '--vary load.workersPerPod=many: load.workersPerPod must be a positive integer, got "many"',
    ]);
    expect(problems(() => validateSweep({ base, vary: { key: 'load.bogus', values: ['1'] } }))[0]).toMatch(
      /^--vary load\.bogus=1: load: unknown key\(s\) bogus/,
    );
    expect(
      problems(() => validateSweep({ base, vary: { key: 'agent.memoryLimit', values: [] }, findOom: { low: '512Mi', high: '96Mi', resolution: 8 } })),
    ).toContain('--find-oom must be <low>..<high> with numeric values, low < high, got 512Mi..96Mi');
    expect(() => validateSweep({ base, vary: { key: 'load.workersPerPod', values: ['10'] }, variants: ['nope'] })).toThrow(/"nope" is not a variant of quick/);
  });
});

describe('sweep results', () => {
  it('orders numeric values numerically and finds where each variant dies', () => {
    expect(sweepOrder(['40', '10', '20'], numericValue)).toEqual(['10', '20', '40']);
    expect(sweepOrder(['256Mi', '1Gi', '128Mi'], numericValue)).toEqual(['128Mi', '256Mi', '1Gi']);
    const pts = [point('10', 'pre', 0), point('20', 'pre', 0), point('40', 'pre', 0), point('10', 'off', 0), point('20', 'off', 1), point('40', 'off', 2)];
    expect(boundaries(pts, ['10', '20', '40'])).toEqual({ first: { pre: null, off: '20' }, last: { pre: null, off: '40' } });
  });

  it('renders a self-contained page with the boundaries and every point', () => {
    const r: SweepResult = {
      schemaVersion: 1,
      scenario: 'quick',
      key: 'load.workersPerPod',
      values: ['10', '20'],
      mode: 'grid',
      status: 'running',
      startedAt: '2026-12-01T00:00:00Z',
      endedAt: null,
      points: [point('10', 'off', 0), point('20', 'off', 1)],
      boundaries: { off: '20' },
      lastKilled: { off: '20' },
    };
    const html = renderSweepHtml(r);
    expect(html).toContain('default-src &#39;none&#39;');
    expect(html).toContain('first OOM-killed at load.workersPerPod = 20');
    expect(html).toContain('interrupted (its runner stopped before the end): only the finished points are shown');
    expect((html.match(/<tr class=/g) ?? []).length).toBe(2);
    expect(html).not.toMatch(/<script[^>]+src=/);
  });
});
