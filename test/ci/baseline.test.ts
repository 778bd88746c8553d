import { describe, expect, it } from 'vitest';
import { agentDifference, baselineTableHtml, baselineTableText, compareWithBaseline, parseTolerances, type BaselineComparison } from '../../src/ci/index.js';
import { escapeHtml } from '../../src/report/index.js';
import { ConfigError } from '../../src/errors.js';
import { results } from './fixture.js';

const base = () =>
  results({
    variants: [
      { name: 'pre', peakMiB: 100, okRps: 500, p99Ms: 20, bystanders: { successRatio: 0.995, longestGapMs: 400 } },
      { name: 'post', peakMiB: 60, okRps: 800, p99Ms: 10 },
    ],
  });

const verdictOf = (c: BaselineComparison, variant: string, figure: string) => c.figures.find((f) => f.variant === variant && f.figure === figure)?.verdict;

describe('compareWithBaseline', () => {
  it('passes a run against itself: every figure unchanged, every variant figure compared', () => {
    const c = compareWithBaseline(base(), base());
    expect(c.regressed).toBe(0);
    expect(c.improved).toBe(0);
    // pre: 8 figures (bystanders present); post: 6 (no bystanders).
    expect(c.figures.filter((f) => f.variant === 'pre')).toHaveLength(8);
    expect(c.figures.filter((f) => f.variant === 'post')).toHaveLength(6);
    expect(c.notes).toEqual([]);
  });

  it('fails a run 30% heavier in memory that still fits under its limit', () => {
    const after = results({
      variants: [
        { name: 'pre', peakMiB: 130, okRps: 500, p99Ms: 20 },
        { name: 'post', peakMiB: 60, okRps: 800, p99Ms: 10 },
      ],
    });
    const c = compareWithBaseline(base(), after);
    expect(verdictOf(c, 'pre', 'peakMemory')).toBe('regressed');
    const fig = c.figures.find((f) => f.figure === 'peakMemory' && f.variant === 'pre')!;
    expect(fig.rule).toBe('new 130.0 MiB > baseline 100.0 MiB + 10% (10.0 MiB) = 110.0 MiB');
    expect(fig.changeRatio).toBeCloseTo(0.3);
    expect(c.regressed).toBe(1);
  });

  it('passes the same run against a loose tolerance and fails it against a stricter one', () => {
    const after = results({
      variants: [
        { name: 'pre', peakMiB: 106, okRps: 500, p99Ms: 20 },
        { name: 'post', peakMiB: 60, okRps: 800, p99Ms: 10 },
      ],
    });
    expect(compareWithBaseline(base(), after).regressed).toBe(0);
    const strict = compareWithBaseline(base(), after, parseTolerances('peakMemory=5%'));
    expect(verdictOf(strict, 'pre', 'peakMemory')).toBe('regressed');
    expect(strict.figures.find((f) => f.figure === 'peakMemory' && f.variant === 'pre')!.tolerance).toBe('5%');
  });

  it('reports improvements in both directions without counting them as regressions', () => {
    const after = results({
      variants: [
        { name: 'pre', peakMiB: 50, okRps: 900, p99Ms: 5 },
        { name: 'post', peakMiB: 60, okRps: 800, p99Ms: 10 },
      ],
    });
    const c = compareWithBaseline(base(), after);
    expect(verdictOf(c, 'pre', 'peakMemory')).toBe('improved'); // lower is better
    expect(verdictOf(c, 'pre', 'okRps')).toBe('improved'); // higher is better
    expect(verdictOf(c, 'pre', 'p99Latency')).toBe('improved');
    expect(c.regressed).toBe(0);
  });

  it('direction: fewer ok/s is a regression, more rejected/s is a regression', () => {
    const after = results({ variants: [{ name: 'pre', peakMiB: 100, okRps: 300, p99Ms: 20, rejectedRps: 200 }] });
    const c = compareWithBaseline(base(), after);
    expect(verdictOf(c, 'pre', 'okRps')).toBe('regressed');
    expect(verdictOf(c, 'pre', 'rejectedRps')).toBe('regressed');
  });

  it('counts compare absolutely: one more OOM kill regresses unless the tolerance allows it', () => {
    const after = results({ variants: [{ name: 'pre', peakMiB: 100, okRps: 500, p99Ms: 20, oomKills: 1, restarts: 1 }] });
    const c = compareWithBaseline(base(), after);
    expect(verdictOf(c, 'pre', 'oomKills')).toBe('regressed');
    expect(verdictOf(c, 'pre', 'restarts')).toBe('regressed');
    expect(c.figures.find((f) => f.figure === 'oomKills')!.rule).toBe('new 1 > baseline 0 + 0 = 0');
    const lenient = compareWithBaseline(base(), after, parseTolerances('oomKills=1,restarts=1'));
    expect(verdictOf(lenient, 'pre', 'oomKills')).toBe('unchanged');
  });

  it('counts compare as the mean per repetition: one kill in one of three repetitions regresses', () => {
    const before = results({ variants: [{ name: 'pre', peakMiB: [90, 100, 110], reps: 3, oomKills: 0 }] });
    const after = results({ variants: [{ name: 'pre', peakMiB: [90, 100, 110], reps: 3, oomKills: 1 }] });
    const c = compareWithBaseline(before, after);
    expect(verdictOf(c, 'pre', 'oomKills')).toBe('regressed');
    expect(c.figures.find((f) => f.figure === 'oomKills')!.rule).toBe('new per repetition 0.33 > baseline 0 + 0 = 0');
    expect(verdictOf(compareWithBaseline(after, before), 'pre', 'oomKills')).toBe('improved');
  });

  it('bystander success compares in percentage points, the gap relatively', () => {
    const after = results({ variants: [{ name: 'pre', peakMiB: 100, okRps: 500, p99Ms: 20, bystanders: { successRatio: 0.98, longestGapMs: 2000 } }] });
    const c = compareWithBaseline(base(), after);
    expect(verdictOf(c, 'pre', 'bystanderSuccess')).toBe('regressed'); // 99.5% → 98.0%: 1.5 pt > 1 pt
    expect(verdictOf(c, 'pre', 'bystanderGap')).toBe('regressed');
    const loose = compareWithBaseline(base(), after, parseTolerances('bystanderSuccess=2%'));
    expect(verdictOf(loose, 'pre', 'bystanderSuccess')).toBe('unchanged');
  });

  it('bystanders that made no call are absent, not 0% success', () => {
    const after = results({ variants: [{ name: 'pre', peakMiB: 100, okRps: 500, p99Ms: 20, bystanders: { successRatio: 0, longestGapMs: 0 } }] });
    (after.variants[0] as unknown as { bystanders: { calls: number } }).bystanders.calls = 0;
    const c = compareWithBaseline(base(), after);
    expect(c.figures.filter((f) => f.figure.startsWith('bystander'))).toEqual([]);
  });

  it('ranges: overlapping repetitions are unchanged even when the medians moved beyond the tolerance', () => {
    const before = results({ variants: [{ name: 'pre', peakMiB: [90, 100, 125], reps: 3 }] });
    const after = results({ variants: [{ name: 'pre', peakMiB: [105, 115, 140], reps: 3 }] });
    const c = compareWithBaseline(before, after);
    // Median +15% (beyond 10%), but the new minimum 105 is not above 125 + 12.5.
    expect(verdictOf(c, 'pre', 'peakMemory')).toBe('unchanged');
    expect(c.figures[0]!.rule).toBe('new min 105.0 MiB ≤ baseline max 125.0 MiB + 10% (12.5 MiB) = 137.5 MiB');
    const shifted = results({ variants: [{ name: 'pre', peakMiB: [140, 150, 160], reps: 3 }] });
    const c2 = compareWithBaseline(before, shifted);
    expect(verdictOf(c2, 'pre', 'peakMemory')).toBe('regressed');
    expect(c2.figures[0]!.rule).toMatch(/^new min 140\.0 MiB > baseline max 125\.0 MiB/);
    expect(c2.figures[0]!.beforeRange).toEqual({ min: 90 * 2 ** 20, median: 100 * 2 ** 20, max: 125 * 2 ** 20 });
  });

  it('a threshold below zero reads as zero', () => {
    const c = compareWithBaseline(base(), base(), parseTolerances('300%'));
    expect(c.figures.find((f) => f.variant === 'pre' && f.figure === 'okRps')!.rule).toBe('new 500/s ≥ baseline 500/s − 300% (1500/s) = 0.0/s');
  });

  it('a relative tolerance never goes below the noise floor (0 → 0.5 rejected/s is not a regression)', () => {
    const before = results({ variants: [{ name: 'pre', peakMiB: 100, rejectedRps: 0 }] });
    const after = results({ variants: [{ name: 'pre', peakMiB: 100, rejectedRps: 0.5 }] });
    expect(verdictOf(compareWithBaseline(before, after), 'pre', 'rejectedRps')).toBe('unchanged');
  });

  it('refuses a baseline of another scenario, saying which', () => {
    const other = results({ scenario: 'scaled', variants: [{ name: 'pre', peakMiB: 100 }] });
    expect(() => compareWithBaseline(other, base(), undefined, { from: 'runs/a/results.json' })).toThrow(ConfigError);
    expect(() => compareWithBaseline(other, base(), undefined, { from: 'runs/a/results.json' })).toThrow(
      '--baseline runs/a/results.json: refused: it is a run of scenario "scaled", this run is of "quick"',
    );
  });

  it('refuses a baseline of another results schema', () => {
    const old = { ...base(), schemaVersion: 1 } as unknown as ReturnType<typeof base>;
    expect(() => compareWithBaseline(old, base())).toThrow(/refused: it has results schemaVersion 1, this attestorm writes 3/);
  });

  it('compares no peak across memory measures, and says so', () => {
    const before = base();
    for (const v of before.variants) v.memoryMeasure = 'usage';
    const c = compareWithBaseline(before, base());
    expect(c.figures.some((f) => f.figure === 'peakMemory')).toBe(false);
    expect(c.figures.some((f) => f.figure === 'oomKills')).toBe(true);
    expect(c.notes).toContain("variant pre: peak memory not compared: the baseline's is its usage, this run's its working set");
  });

  it('flags variants whose agent version differs, and variants present on one side only', () => {
    const after = results({
      variants: [
        { name: 'pre', peakMiB: 100, okRps: 500, p99Ms: 20, version: '0.2.0' },
        { name: 'extra', peakMiB: 10 },
      ],
    });
    const c = compareWithBaseline(base(), after);
    expect(c.notes).toContain('variant pre: the agent differs from the baseline\'s (version "0.1.0" → "0.2.0"); compared anyway, flagged');
    expect(c.notes).toContain('variant post: in the baseline only, not compared');
    expect(c.notes).toContain('variant extra: not in the baseline, not compared');
    expect(c.figures.filter((f) => f.variant === 'pre').every((f) => f.flag === 'agent differs: version "0.1.0" → "0.2.0"')).toBe(true);
    expect(baselineTableText(c)).toContain('unchanged (flagged)');
  });

  it('notes scenario settings that differ', () => {
    const after = results({ duration: '60s', variants: [{ name: 'pre', peakMiB: 100, okRps: 500, p99Ms: 20 }] });
    const c = compareWithBaseline(base(), after);
    expect(c.notes).toContain('scenario settings differ from the baseline\'s: load.duration "30s" → "60s"');
  });

  it('does not compare a variant that did not run, and says so', () => {
    const after = results({ variants: [{ name: 'pre', peakMiB: 0, error: 'agent did not start' }] });
    const c = compareWithBaseline(base(), after);
    expect(c.figures.filter((f) => f.variant === 'pre')).toEqual([]);
    expect(c.notes).toContain('variant pre: not compared, it did not run in the new run (agent did not start)');
  });

  it('agentDifference names each field that differs', () => {
    expect(
      agentDifference({ kind: 'spire', placement: null, key: null, version: '1.9.0' }, { kind: 'spire', placement: null, key: null, version: '1.10.0' }),
    ).toBe('version "1.9.0" → "1.10.0"');
    expect(agentDifference({ kind: 'spire', placement: null, key: null }, { kind: 'spire', placement: null, key: null })).toBeNull();
    // Another checkout's path to the same version is not a difference; without versions it is.
    expect(
      agentDifference(
        { kind: 'spire', placement: null, key: null, binary: '/a/spire-agent', version: '1.9.0' },
        { kind: 'spire', placement: null, key: null, binary: '/b/spire-agent', version: '1.9.0' },
      ),
    ).toBeNull();
    expect(
      agentDifference(
        { kind: 'external', placement: null, key: null, binary: '/a/agent' },
        { kind: 'external', placement: null, key: null, binary: '/b/agent' },
      ),
    ).toBe('binary "/a/agent" → "/b/agent"');
  });

  it('records the baseline commit from its provenance', () => {
    const before = results({ commit: 'a'.repeat(40), variants: [{ name: 'pre', peakMiB: 100 }] });
    const c = compareWithBaseline(before, base());
    expect(c.baselineCommit).toBe('a'.repeat(40));
    expect(baselineTableText(c)).toContain(`(commit ${'a'.repeat(12)})`);
  });
});

describe('baselineTableHtml', () => {
  it('marks regressed rows failed and improved rows passed, and escapes names', () => {
    const before = results({ variants: [{ name: '<pre>', peakMiB: 100, okRps: 500 }] });
    const after = results({ variants: [{ name: '<pre>', peakMiB: 130, okRps: 900 }] });
    const html = baselineTableHtml(compareWithBaseline(before, after), escapeHtml);
    expect(html).toContain('<tr class="failed" data-figure="&lt;pre&gt;/peakMemory" data-index="0"><th scope="row">&lt;pre&gt;</th>');
    expect(html).toMatch(/<tr class="passed" data-figure="&lt;pre&gt;\/okRps"/);
    expect(html).not.toContain('<pre>');
    expect(html).toContain('new 130.0 MiB &gt; baseline 100.0 MiB + 10% (10.0 MiB) = 110.0 MiB');
  });
});

describe('parseTolerances', () => {
  it('defaults: 10% relative, 0 for counts, 1 point for bystander success', () => {
    const t = parseTolerances(undefined);
    expect(t.byFigure.peakMemory).toBe(0.1);
    expect(t.byFigure.oomKills).toBe(0);
    expect(t.byFigure.bystanderSuccess).toBe(0.01);
    expect(t.text.bystanderSuccess).toBe('1 pt');
  });

  it('a bare percentage sets every relative figure; pairs set single figures; repeated flags merge', () => {
    const t = parseTolerances(['20%', 'peakMemory=5%,bystanderSuccess=0.5%', 'restarts=2']);
    expect(t.byFigure.okRps).toBe(0.2);
    expect(t.byFigure.peakMemory).toBe(0.05);
    expect(t.byFigure.bystanderSuccess).toBe(0.005);
    expect(t.byFigure.restarts).toBe(2);
    expect(t.byFigure.oomKills).toBe(0);
    expect(t.text.peakMemory).toBe('5%');
  });

  it.each([
    ['10', '--tolerance "10": a bare tolerance must be a percentage like 10% (or name a figure: peakMemory=5%)'],
    [
      'memory=5%',
      '--tolerance "memory=5%": unknown figure "memory"; use one of peakMemory, oomKills, restarts, okRps, rejectedRps, p99Latency, bystanderSuccess, bystanderGap',
    ],
    ['oomKills=10%', '--tolerance "oomKills=10%": oomKills is a count compared absolutely; give a whole number of kills like oomKills=1'],
    ['peakMemory=5', '--tolerance "peakMemory=5": peakMemory takes a percentage like peakMemory=5%'],
    ['-5%', '--tolerance "-5%": a bare tolerance must be a percentage like 10% (or name a figure: peakMemory=5%)'],
  ])('refuses %s with a message naming the flag and the rule', (input, message) => {
    expect(() => parseTolerances(input)).toThrow(ConfigError);
    expect(() => parseTolerances(input)).toThrow(message);
  });

  it('lists every bad item at once', () => {
    try {
      parseTolerances('x,oomKills=1.5');
      expect.unreachable();
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(2);
    }
  });
});
