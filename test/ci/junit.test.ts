import { describe, expect, it } from 'vitest';
import { compareWithBaseline, parseTolerances, renderJUnit, xmlEscape } from '../../src/ci/index.js';
import { expectation, results } from './fixture.js';
import { findAll, parseXml } from './xml.js';

const before = results({
  variants: [
    { name: 'pre', peakMiB: 100 },
    { name: 'post', peakMiB: 60 },
  ],
});
const after = results({
  commit: 'b'.repeat(40),
  variants: [
    {
      name: 'pre',
      peakMiB: 140,
      oomKills: 2,
      expectations: [
        expectation('oomKilled', 'failed', 'OOM-killed 2 times, expected none'),
        expectation('maxPeakMemory', 'inconclusive', 'peak is only known to be at least 128 MiB (OOM-killed)'),
      ],
    },
    { name: 'post', peakMiB: 40, expectations: [expectation('oomKilled', 'passed', 'not OOM-killed')] },
    { name: 'broken <&> "x"', peakMiB: 0, error: 'agent did not start: exit 1 & <stderr>\u0001' },
  ],
});

describe('renderJUnit', () => {
  const cmp = compareWithBaseline(before, after, parseTolerances(undefined), { from: 'runs/base/results.json' });
  const xml = renderJUnit([{ results: after, baseline: cmp, runDir: '/tmp/run' }]);
  const doc = parseXml(xml);

  it('is well-formed and counts every case, failure, error and skip', () => {
    expect(doc.name).toBe('testsuites');
    const cases = findAll(doc, 'testcase');
    expect(Number(doc.attrs['tests'])).toBe(cases.length);
    expect(Number(doc.attrs['failures'])).toBe(findAll(doc, 'failure').length);
    expect(Number(doc.attrs['errors'])).toBe(1);
    expect(Number(doc.attrs['skipped'])).toBe(1);
    for (const s of findAll(doc, 'testsuite')) {
      const own = s.children.filter((c) => c.name === 'testcase');
      expect(Number(s.attrs['tests'])).toBe(own.length);
      expect(Number(s.attrs['failures'])).toBe(own.filter((c) => c.children.some((x) => x.name === 'failure')).length);
    }
  });

  it('has one suite per variant, one case per expectation and per baseline figure', () => {
    const suites = findAll(doc, 'testsuite');
    expect(suites.map((s) => s.attrs['name'])).toEqual(['quick.pre', 'quick.post', 'quick.broken <&> "x"']);
    const pre = suites[0]!;
    const names = pre.children.filter((c) => c.name === 'testcase').map((c) => c.attrs['name']);
    expect(names).toEqual([
      'expectation oomKilled',
      'expectation maxPeakMemory',
      ...cmp.figures.filter((f) => f.variant === 'pre').map((f) => `baseline ${f.figure}`),
    ]);
    expect(names).toContain('baseline peakMemory');
    expect(names).toContain('baseline oomKills');
  });

  it('failures say what a person needs: the variant, the figure, the numbers and the rule', () => {
    const pre = findAll(doc, 'testsuite')[0]!;
    const byName = (n: string) => pre.children.find((c) => c.attrs['name'] === n)!;
    const exp = byName('expectation oomKilled').children.find((c) => c.name === 'failure')!;
    expect(exp.attrs['message']).toBe('pre: OOM-killed 2 times, expected none');
    expect(exp.attrs['type']).toBe('expectation-failed');
    const mem = byName('baseline peakMemory').children.find((c) => c.name === 'failure')!;
    expect(mem.attrs['type']).toBe('baseline-regression');
    expect(mem.attrs['message']).toBe(
      'pre: peak memory regressed: peak memory +40.0% against runs/base/results.json (tolerance 10%): new 140.0 MiB > baseline 100.0 MiB + 10% (10.0 MiB) = 110.0 MiB',
    );
    expect(mem.text).toContain('rule: Each figure is compared as a range');
    const kills = byName('baseline oomKills').children.find((c) => c.name === 'failure')!;
    expect(kills.attrs['message']).toContain('new 2 > baseline 0 + 0 = 0');
  });

  it('inconclusive is skipped with its reason; improvements pass with a note', () => {
    const pre = findAll(doc, 'testsuite')[0]!;
    const skipped = pre.children.find((c) => c.attrs['name'] === 'expectation maxPeakMemory')!.children.find((c) => c.name === 'skipped')!;
    expect(skipped.attrs['message']).toBe('inconclusive: peak is only known to be at least 128 MiB (OOM-killed)');
    const post = findAll(doc, 'testsuite')[1]!;
    const mem = post.children.find((c) => c.attrs['name'] === 'baseline peakMemory')!;
    expect(mem.children.map((c) => c.name)).toEqual(['system-out']);
    expect(mem.children[0]!.text).toMatch(/^improved: peak memory −33\.3%/);
  });

  it('a variant that did not run is an error, and hostile text survives escaping', () => {
    const broken = findAll(doc, 'testsuite')[2]!;
    const err = findAll(broken, 'error')[0]!;
    expect(err.attrs['message']).toBe('broken <&> "x" did not run: agent did not start: exit 1 & <stderr>\uFFFD');
  });

  it('records commit, baseline and run folder as properties', () => {
    const props = Object.fromEntries(findAll(findAll(doc, 'testsuite')[0]!, 'property').map((p) => [p.attrs['name'], p.attrs['value']]));
    expect(props['commit']).toBe('b'.repeat(40));
    expect(props['baseline']).toBe('runs/base/results.json');
    expect(props['runDir']).toBe('/tmp/run');
  });

  it('without a baseline, only expectations', () => {
    const plain = parseXml(renderJUnit([{ results: after }]));
    expect(findAll(plain, 'testcase').map((c) => c.attrs['name'])).toEqual([
      'expectation oomKilled',
      'expectation maxPeakMemory',
      'expectation oomKilled',
      'variant ran',
    ]);
  });

  it('rules dropped before the run (their variant not run) are skipped cases with the reason, counted', () => {
    const dropped = parseXml(
      renderJUnit([{ results: { ...after, droppedExpectations: ['off.oomKilled (variant not run)', 'pre.maxPeakRatio (compares with off, not run)'] } }]),
    );
    const suite = findAll(dropped, 'testsuite').find((s) => s.attrs['name'] === 'quick.not-run')!;
    expect(suite.attrs).toMatchObject({ tests: '2', skipped: '2', failures: '0' });
    const cases = suite.children.filter((c) => c.name === 'testcase');
    expect(cases.map((c) => [c.attrs['classname'], c.attrs['name'], c.children.find((x) => x.name === 'skipped')?.attrs['message']])).toEqual([
      ['quick.off', 'expectation oomKilled', 'not judged: variant not run'],
      ['quick.pre', 'expectation maxPeakRatio', 'not judged: compares with off, not run'],
    ]);
    expect(Number(dropped.attrs['skipped'])).toBe(3);
  });

  it('the checker itself rejects broken XML', () => {
    expect(() => parseXml('<a><b></a></b>')).toThrow(/does not match/);
    expect(() => parseXml('<a x="1 & 2"/>')).toThrow(/bare &/);
    expect(() => parseXml('<a>\u0001</a>')).toThrow(/forbids/);
    expect(() => parseXml('<a x="1" x="2"/>')).toThrow(/duplicate/);
  });

  it('xmlEscape round-trips attribute text with quotes, line breaks and control characters', () => {
    const text = `a "b" 'c' <d> & e\nf\tg\u0007`;
    const el = parseXml(`<x v="${xmlEscape(text)}"/>`);
    expect(el.attrs['v']).toBe(text.replace('\u0007', '\uFFFD'));
  });
});
