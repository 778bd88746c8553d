// The end-of-run table as a user meets it: a recorded run of the default scenario laid out for 80
// and 120 columns, every column with --wide, the width taken from COLUMNS or the terminal, and the
// modeled costs said in words; the live progress before it fits too.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentConfigSchema } from '../../src/agent/index.js';
import { MODEL_DEFAULTS, modeledCostsSentences, type RunResults } from '../../src/contract/index.js';
import { comparisonTable, ESSENTIAL_COLUMNS, Progress, WIDE_COLUMNS } from '../../src/scenario/index.js';
import { terminalColumns, wrapText } from '../../src/util/index.js';
import { variantResult } from '../support/variant-result.js';

const recorded = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, '..', 'report', 'fixtures', name, 'results.json'), 'utf8')) as RunResults;
const longest = (text: string) => Math.max(...text.split('\n').map((l) => l.length));
const headerOf = (table: string) => table.split('\n')[0]!;

describe('the end-of-run table', () => {
  for (const name of ['quick-all-met', 'quick-one-failed']) {
    for (const width of [80, 120]) {
      it(`${name} fits ${width} columns, with the essential columns and every variant`, () => {
        const results = recorded(name);
        const table = comparisonTable(results, { width });
        expect(longest(table)).toBeLessThanOrEqual(width);
        for (const c of ESSENTIAL_COLUMNS) expect(headerOf(table)).toContain(c.header);
        for (const v of results.variants) expect(table).toContain(v.name);
        expect(table).not.toMatch(/[{}]/);
      });
    }
  }

  it('keeps every line of the notes under the width, cutting a word longer than a line', () => {
    const results = recorded('quick-one-failed');
    results.variants[0]!.expectations.find((e) => e.verdict === 'failed')!.message = `${'x'.repeat(150)} then words`;
    const table = comparisonTable(results, { width: 80 });
    expect(longest(table)).toBeLessThanOrEqual(80);
    expect(table).toContain('then words');
  });

  it('cuts long variant names with … rather than overflow', () => {
    const results = recorded('quick-one-failed');
    results.variants[3]!.name = 'disabled-unbounded-with-a-name-nobody-should-give-a-variant';
    const table = comparisonTable(results, { width: 80 });
    expect(longest(table)).toBeLessThanOrEqual(80);
    expect(table).toMatch(/\ndisabled-unbounded-\S*… +111\.1\/1024 /);
  });

  it('--wide shows every column, in full', () => {
    const results = recorded('quick-all-met');
    const table = comparisonTable(results, { width: 80, wide: true });
    const header = headerOf(table);
    for (const c of WIDE_COLUMNS) expect(header).toContain(c.header);
    for (const h of ['variant', 'agent', 'limit', 'OOM kills', 'restarts', 'offered→answered/s', 'deadline/s', 'error/s', 'p99 ok ms', 'expectations']) {
      expect(header).toContain(h);
    }
    expect(table).toContain('reference post-attestation');
    expect(table).toContain('disabled-unbounded');
    expect(table).not.toContain('…');
  });

  it('says a variant that did not run, and why, under the table', () => {
    const results = recorded('quick-all-met');
    results.variants[1] = variantResult({ name: 'post-attestation', error: 'the agent did not start within 60 s: socket never appeared' });
    const table = comparisonTable(results, { width: 80 });
    expect(table).toMatch(/post-attestation .* error\n/);
    expect(table).toContain('post-attestation: the agent did not start within 60 s');
  });
});

describe('modeled costs on the console', () => {
  it('are words, only those that differ from the defaults, once when every variant shares them', () => {
    const table = comparisonTable(recorded('quick-all-met'), { width: 120 });
    expect(table).toContain('every variant: attestations run on after their caller gave up (model.cancelAbandoned false)');
    expect(table).not.toContain('pre-attestation={');
  });

  it('name the variants when they differ, and leave out settings equal to the defaults', () => {
    const costs = {
      'ref-older': { cancelAbandoned: false, podListWorkingSet: 0 },
      'ref-new': { cancelAbandoned: true, podListWorkingSet: '22Mi' },
      spire: {},
    };
    expect(modeledCostsSentences(costs, ['ref-older', 'ref-new', 'spire'])).toEqual([
      'ref-older: attestations run on after their caller gave up (model.cancelAbandoned false)',
      'ref-new: each parsed kubelet pod list holds 22Mi more (model.podListWorkingSet)',
    ]);
    expect(modeledCostsSentences({ attestationWorkingSet: '256Ki' })).toEqual([
      'every variant: each attestation in flight holds 256Ki more (model.attestationWorkingSet)',
    ]);
    expect(modeledCostsSentences({ a: { cancelAbandoned: true, attestationWorkingSet: '0Mi' } })).toEqual([]);
    expect(modeledCostsSentences({ a: { burstPool: { size: 3 } } })).toEqual(['every variant: model.burstPool size 3']);
  });

  it("keep the agent's own defaults", () => {
    expect(agentConfigSchema.parse({}).model).toEqual(MODEL_DEFAULTS);
  });
});

describe('live progress', () => {
  function feed(columns: number): string[] {
    const out: string[] = [];
    const p = new Progress({ tty: false, plainEverySeconds: 1, columns, stream: { write: (s: string) => out.push(s) } as never });
    p.placementStart('disabled-unbounded', 20_000);
    p.onSample({ kind: 'memory', t: 0, usageBytes: 706.9 * 2 ** 20, rssBytes: null, peakBytes: 0, limitBytes: 2 ** 30, cpuSeconds: null });
    p.onSample({ kind: 'load', t: 1000, ok: 0, rateLimited: 0, deadlineExceeded: 13, error: 100, byCode: {}, histograms: {} });
    p.onSample({ kind: 'event', t: 1500, type: 'oom-kill', detail: 'kernel OOM kill (oom_kill +1), signal SIGKILL' });
    p.onSample({ kind: 'load', t: 2000, ok: 0, rateLimited: 0, deadlineExceeded: 13, error: 100, byCode: {}, histograms: {} });
    p.placementEnd('peak 742.7 MiB of 1024 MiB, OOM kills 1, restarts 0, ok 2.5/s');
    p.stop();
    return out.join('').trimEnd().split('\n');
  }

  it('fits 80 columns: the status in short, other lines wrapped', () => {
    const lines = feed(80);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
    expect(lines).toContain('disabled-unbounded 1/20s | 706.9/1024 MiB | ok 0 rej 0 fail 113/s | OOM 1');
  });

  it('says it in full where there is room', () => {
    expect(feed(200)).toContain('disabled-unbounded 1/20s | agent 706.9 MiB / 1024 MiB (69%) | ok 0/s rejected 0/s failed 113/s | OOM 1 restarts 0');
  });
});

describe('terminal width', () => {
  it('is COLUMNS when set, else the TTY width, else 80; never below 80', () => {
    expect(terminalColumns({ isTTY: true, columns: 150 }, { COLUMNS: '100' })).toBe(100);
    expect(terminalColumns({ isTTY: true, columns: 150 }, {})).toBe(150);
    expect(terminalColumns({ isTTY: false, columns: 150 }, {})).toBe(80);
    expect(terminalColumns(undefined, {})).toBe(80);
    expect(terminalColumns({ isTTY: true, columns: 40 }, {})).toBe(80);
    expect(terminalColumns({ isTTY: false }, { COLUMNS: '60' })).toBe(80);
    expect(terminalColumns({ isTTY: false }, { COLUMNS: 'wide' })).toBe(80);
  });

  it('wraps words with a hanging indent', () => {
    expect(wrapText('aaa bbb ccc ddd', 9, '  ', '    ')).toEqual(['  aaa bbb', '    ccc', '    ddd']);
    expect(wrapText('', 9)).toEqual(['']);
  });
});
