// `attestorm comment`: the pull-request comment body on fixture run folders (real samples, so the
// memory chart is drawn from them) — the marker, the verdict, every figure's change and the mark of
// the gate's own verdict, a regression beyond tolerance, the run alone, the comparison a run stored,
// GitHub's length limit — and the command itself.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMENT_LIMIT, commentMarker, commentOnRun, compareWithBaseline, renderPrComment, type BaselineComparison } from '../../src/ci/index.js';
import type { RunResults } from '../../src/contract/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { mermaidBlocks, parseXyChart } from '../support/mermaid-xychart.js';
import { writeFixtureRun } from '../report/fixture.js';
import { results as resultsFixture } from './fixture.js';

const MiB = 2 ** 20;
let parent: string;
/** A run of three variants that met every expectation; disabled was OOM-killed at its 320 MiB limit. */
let run: string;
let runResults: RunResults;

beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'attestorm-comment-'));
  run = await writeFixtureRun({
    parent,
    name: 'branch',
    placements: [
      { name: 'pre-attestation', peakMiB: 138.4 },
      { name: 'post-attestation', peakMiB: 250 },
      { name: 'disabled', peakMiB: 341 },
    ],
  });
  runResults = JSON.parse(await readFile(path.join(run, 'results.json'), 'utf8')) as RunResults;
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

/** The run's results.json with each named variant's peak memory divided by a factor, as a baseline folder. */
async function baselineWith(name: string, peakDivisors: Record<string, number>): Promise<string> {
  const base = structuredClone(runResults);
  for (const v of base.variants) if (peakDivisors[v.name]) v.peakMemoryBytes = v.peakMemoryBytes! / peakDivisors[v.name]!;
  const dir = path.join(parent, name);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'results.json'), JSON.stringify(base));
  return dir;
}

/** The figure table's cells by variant and column header. */
function figureTable(text: string): Map<string, Record<string, string>> {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith('| variant | peak memory'));
  const head = lines[at]!.split('|')
    .slice(1, -1)
    .map((c) => c.trim());
  const rows = new Map<string, Record<string, string>>();
  for (const line of lines.slice(at + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    rows.set(cells[0]!, Object.fromEntries(head.map((h, i) => [h, cells[i]!])));
  }
  return rows;
}

const MARK = { unchanged: '✅', regressed: '❌', improved: '🟢' } as const;

const readResults = async (dir: string) => JSON.parse(await readFile(path.join(dir, 'results.json'), 'utf8')) as RunResults;

describe('the comment against a baseline', () => {
  let text: string;
  let cmp: BaselineComparison;
  let gate: BaselineComparison;
  beforeAll(async () => {
    // pre-attestation's memory is 30% above the baseline's (beyond 10%); post-attestation's 5% (within).
    const baseline = await baselineWith('main', { 'pre-attestation': 1.3, 'post-attestation': 1.05 });
    const out = await commentOnRun(run, { baseline, log: () => {} });
    text = out.text;
    cmp = out.comparison!;
    // The gate's comparison of the same files, made here on its own.
    gate = compareWithBaseline(await readResults(baseline), await readResults(run), undefined, { from: path.join(baseline, 'results.json') });
  });

  it('opens with the hidden marker, then the verdict the regression makes of a run that met its expectations', () => {
    expect(runResults.verdict).toBe('passed');
    const lines = text.split('\n');
    expect(lines[0]).toBe('<!-- attestorm-comment scenario=storm-fixture -->');
    expect(lines[1]).toBe('### ❌ failed — attestorm storm-fixture');
    expect(lines[3]).toMatch(/· baseline main\/results\.json: 1 regressed, 0 improved, \d+ unchanged$/);
  });

  it('marks every figure with the verdict the gate gave it, beside its value and change', () => {
    expect(cmp).toEqual(gate);
    const table = figureTable(text);
    expect([...table.keys()]).toEqual(['pre-attestation', 'post-attestation', 'disabled']);
    expect(gate.figures.length).toBeGreaterThan(15);
    for (const f of gate.figures) {
      const cell = table.get(f.variant)![f.label]!;
      expect(cell.endsWith(MARK[f.verdict]), `${f.variant} ${f.label}: ${cell}`).toBe(true);
    }
    expect(table.get('pre-attestation')!['peak memory']).toBe(`${(runResults.variants[0]!.peakMemoryBytes! / MiB).toFixed(1)} MiB (+30.0%) ❌`);
    expect(table.get('post-attestation')!['peak memory']).toMatch(/^\d+\.\d MiB \(\+5\.0%\) ✅$/);
    expect(table.get('disabled')!['OOM kills']).toBe('1 (±0) ✅');
  });

  it('lists the regression with the comparison that decided it, and every figure in a folded table', () => {
    const fig = cmp.figures.find((f) => f.verdict === 'regressed')!;
    expect(fig).toMatchObject({ variant: 'pre-attestation', figure: 'peakMemory' });
    expect(text).toContain(`- ❌ **pre-attestation** peak memory regressed: ${fig.rule}`);
    const folded = text.slice(text.indexOf('<details>'), text.indexOf('</details>'));
    expect(folded.split('\n').filter((l) => /^\| (pre|post)-attestation|^\| disabled/.test(l))).toHaveLength(cmp.figures.length);
    expect(folded).toContain('| **REGRESSED** |');
  });

  it('draws one compact memory chart from the samples, a line per variant', () => {
    const blocks = mermaidBlocks(text);
    expect(blocks).toHaveLength(1);
    const chart = parseXyChart(blocks[0]!);
    expect(chart.title).toBe('Agent memory (MiB)');
    expect(chart.lines).toHaveLength(3);
    expect(chart.lines[0]!.length).toBeLessThanOrEqual(30);
    // disabled reached its limit before it was killed.
    expect(Math.max(...chart.lines[2]!)).toBeCloseTo(320, 0);
  });

  it('a stricter tolerance turns the 5% change into a regression too', async () => {
    const baseline = path.join(parent, 'main');
    const strict = await commentOnRun(run, { baseline, tolerance: ['peakMemory=3%'], log: () => {} });
    expect(strict.comparison!.regressed).toBe(2);
    expect(figureTable(strict.text).get('post-attestation')!['peak memory']).toMatch(/\(\+5\.0%\) ❌$/);
  });
});

describe('the comment without a baseline', () => {
  it('shows the run alone: the figures without changes or marks', async () => {
    const { text, comparison } = await commentOnRun(run, { log: () => {} });
    expect(comparison).toBeNull();
    expect(text.split('\n').slice(0, 2)).toEqual(['<!-- attestorm-comment scenario=storm-fixture -->', '### ✅ passed — attestorm storm-fixture']);
    expect(text).toContain('· no baseline: the run alone');
    const table = figureTable(text);
    expect(table.get('pre-attestation')!['peak memory']).toBe(`${(runResults.variants[0]!.peakMemoryBytes! / MiB).toFixed(1)} MiB`);
    // The verdict's mark aside, no figure is marked and nothing is folded away.
    expect(text.split('\n').slice(2).join('\n')).not.toMatch(/✅|❌|🟢|within tolerance|<details>/u);
    expect(mermaidBlocks(text)).toHaveLength(1);
  });

  it('uses the comparison `run --baseline` stored in results.json; --baseline replaces it', async () => {
    const stored = await writeFixtureRun({ parent, name: 'stored', placements: [{ name: 'pre-attestation', peakMiB: 138.4 }] });
    const results = await readResults(stored);
    const heavier = structuredClone(results);
    heavier.variants[0]!.peakMemoryBytes = heavier.variants[0]!.peakMemoryBytes! * 0.5;
    (results as unknown as Record<string, unknown>)['baseline'] = compareWithBaseline(heavier, results, undefined, { from: '/ci/main/results.json' });
    await writeFile(path.join(stored, 'results.json'), JSON.stringify(results));
    const fromFile = await commentOnRun(stored, { log: () => {} });
    expect(fromFile.text).toContain('· baseline main/results.json: 1 regressed');
    expect(figureTable(fromFile.text).get('pre-attestation')!['peak memory']).toMatch(/\(\+100\.0%\) ❌$/);
    const replaced = await commentOnRun(stored, { baseline: path.join(stored, 'results.json'), log: () => {} });
    expect(replaced.comparison!.regressed).toBe(0);
    expect(figureTable(replaced.text).get('pre-attestation')!['peak memory']).toMatch(/\(±0\.0%\) ✅$/);
  });

  it('goes without its chart when the samples are gone (a results.json kept alone)', async () => {
    const bare = path.join(parent, 'bare');
    await mkdir(bare, { recursive: true });
    await writeFile(path.join(bare, 'results.json'), JSON.stringify(runResults));
    const { text } = await commentOnRun(bare, { log: () => {} });
    expect(mermaidBlocks(text)).toHaveLength(0);
    expect(figureTable(text).size).toBe(3);
  });
});

describe("GitHub's comment limit", () => {
  const many = (n: number, nameLength: number, firstPeakMiB = 100) =>
    resultsFixture({
      variants: Array.from({ length: n }, (_, i) => ({ name: `v${i}-${'x'.repeat(nameLength)}`, peakMiB: i === 0 ? firstPeakMiB : 100 + (i % 7) })),
    });
  const chart = ['```mermaid', 'xychart-beta', '  title "Agent memory (MiB)"', '  x-axis "s" 0 --> 10', '  y-axis "MiB" 0 --> 200', '  line [1, 2]', '```'];

  it('leaves out the folded table before anything else, and says so', () => {
    const before = many(120, 20);
    const after = many(120, 20, 200);
    const cmp = compareWithBaseline(before, after);
    const text = renderPrComment({ results: after, baseline: cmp, runDir: 'r', charts: chart });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(text).not.toContain('<details>');
    expect(text).toContain("Left out to stay under GitHub's comment limit: the table of every figure against the baseline.");
    expect(mermaidBlocks(text)).toHaveLength(1);
    expect(figureTable(text).size).toBe(120);
    expect(figureTable(text).get(after.variants[0]!.name)!['peak memory']).toMatch(/\(\+100\.0%\) ❌$/);
  });

  it('cuts the figure table at a row, with a note, when even that is too long; the marker and verdict stay', () => {
    const before = many(2000, 40);
    const after = many(2000, 40);
    const cmp = compareWithBaseline(before, after);
    const text = renderPrComment({ results: after, baseline: cmp, runDir: 'r', charts: chart });
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(Buffer.byteLength(text)).toBeGreaterThan(COMMENT_LIMIT - 2000);
    expect(text.split('\n').slice(0, 2)).toEqual(['<!-- attestorm-comment scenario=quick -->', '### ✅ passed — attestorm quick']);
    expect(text).toMatch(/> ✂️ Comment cut to stay under GitHub's 65,536-character comment limit: \d+ more lines; everything is in r\/results\.json\.\n\n$/);
    const rows = text.split('\n').filter((l) => l.startsWith('| v'));
    expect(rows.length).toBeGreaterThan(100);
    expect(rows.every((r) => r.endsWith('|'))).toBe(true);
    expect(mermaidBlocks(text)).toHaveLength(0);
  });

  it('keeps the marker an HTML comment whatever the scenario is called', () => {
    expect(commentMarker('quick')).toBe('<!-- attestorm-comment scenario=quick -->');
    expect(commentMarker('a --> b')).toBe('<!-- attestorm-comment scenario=a-----b -->');
  });
});

describe('attestorm comment', () => {
  const cli = (...args: string[]) => spawnSync('node', ['bin/attestorm.js', 'comment', ...args], { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 120_000 });

  it('writes --out against a baseline; refuses --tolerance without one and a baseline of another scenario', async () => {
    const out = path.join(parent, 'comment.md');
    const ok = cli(run, '--baseline', path.join(parent, 'main'), '--out', out);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stderr).toBe(`${out}\n`);
    const text = await readFile(out, 'utf8');
    expect(text.split('\n')[1]).toBe('### ❌ failed — attestorm storm-fixture');
    const bad = cli(run, '--tolerance', '5%');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--tolerance applies to a --baseline comparison');
    const other = cli(run, '--baseline', await writeFixtureRunOf('other-scenario'));
    expect(other.status).toBe(2);
    expect(other.stderr).toContain('refused: it is a run of scenario "other"');
  });
});

async function writeFixtureRunOf(name: string): Promise<string> {
  const dir = path.join(parent, name);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'results.json'), JSON.stringify({ ...runResults, scenario: { ...runResults.scenario, name: 'other' } }));
  return dir;
}
