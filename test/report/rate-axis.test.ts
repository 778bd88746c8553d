// The calls-per-second axis that one variant's spike cannot take over, in every renderer that plots
// rates: the chart definition the page and the PNGs share, and the Mermaid blocks of summary.md.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildChartSpecs, deriveReport, loadRun, renderReports, type ChartSpec } from '../../src/report/index.js';
import { rateAxis } from '../../src/report/chart-axis.js';
import { mermaidBlocks, parseXyChart } from '../support/mermaid-xychart.js';
import { writeFixtureRun } from './fixture.js';
import { copyRecordedRun } from './recorded-runs.js';

let parent: string;
beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'attestorm-rate-axis-'));
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

type Dataset = { label: string; type?: string; data: { x: number; y: number | null }[]; offScale?: number[]; offScaleLabels?: string[] };
const datasets = (spec: ChartSpec) => spec.config.data.datasets as unknown as Dataset[];
const yMax = (spec: ChartSpec) => (spec.config.options as { scales: { y: { max: number } } }).scales.y.max;
const lineMax = (d: Dataset) => Math.max(...d.data.map((p) => p.y ?? 0));
const rpsOf = async (dir: string) => buildChartSpecs(deriveReport([await loadRun(dir)])).find((c) => c.id === 'rps')!;

describe('rateAxis', () => {
  const steady = Array.from({ length: 240 }, (_, i) => (i % 60) * 10); // 0..590

  it('covers every value when none stands out', () => {
    expect(rateAxis(steady)).toEqual({ max: 700, clipped: false });
    // Twice the level is still on the axis: the highest line is not a spike.
    expect(rateAxis([...steady, 1100])).toEqual({ max: 1200, clipped: false });
  });

  it('leaves a few seconds far above the rest off the axis', () => {
    expect(rateAxis([...steady, 5002, 4100, 3700])).toEqual({ max: 700, clipped: true });
  });

  it('lets a level that lasts more than 5% of the plotted seconds set the axis', () => {
    const long = Array.from({ length: 30 }, () => 3500);
    expect(rateAxis([...steady, ...long]).max).toBeGreaterThanOrEqual(3500);
  });

  it('gives a flat or empty chart an axis of 1', () => {
    expect(rateAxis([0, 0, 0])).toEqual({ max: 1, clipped: false });
    expect(rateAxis([])).toEqual({ max: 1, clipped: false });
    // Nothing but a spike over zeros: the spike is all there is to see.
    expect(rateAxis([0, 0, 0, 0, 40]).max).toBeGreaterThanOrEqual(40);
  });
});

describe('the calls-per-second chart (page and rps.png)', () => {
  it('keeps the axis on the other lines when one variant fails 3,500 calls/s after its OOM kill, and marks the spike with its value', async () => {
    const dir = await writeFixtureRun({ parent, name: 'spike', downErrorsPerSecond: 3500 });
    const rps = await rpsOf(dir);
    const lines = datasets(rps).filter((d) => d.type !== 'scatter');
    const spike = lines.find((d) => d.label === 'disabled other errors')!;
    const others = lines.filter((d) => d !== spike);
    expect(lineMax(spike)).toBeGreaterThan(3000);
    expect(yMax(rps)).toBeGreaterThanOrEqual(Math.max(...others.map(lineMax)));
    expect(yMax(rps)).toBeLessThan(lineMax(spike) / 2);

    const marks = datasets(rps).filter((d) => d.type === 'scatter');
    expect(marks.map((d) => d.label)).toEqual(['disabled other errors ↑ (above the axis)']);
    expect(marks[0]!.data.every((p) => p.y === yMax(rps))).toBe(true);
    expect(Math.max(...marks[0]!.offScale!)).toBe(lineMax(spike));
    expect(marks[0]!.offScaleLabels).toContain(`${lineMax(spike).toLocaleString('en-US')}/s`);
    expect(rps.description).toContain(`disabled other errors (up to ${lineMax(spike).toLocaleString('en-US')}/s)`);
  });

  it('draws every line on the axis when nothing spikes', async () => {
    const rps = await rpsOf(await writeFixtureRun({ parent, name: 'no-spike' }));
    expect(yMax(rps)).toBeGreaterThanOrEqual(Math.max(...datasets(rps).map(lineMax)));
    expect(datasets(rps).some((d) => d.type === 'scatter')).toBe(false);
  });

  it('a recorded run: two variants failing 4,000–5,000 calls/s after their OOM kills no longer flatten the 583 rejections/s of pre-attestation', async () => {
    const rps = await rpsOf(await copyRecordedRun('quick-all-met', parent));
    expect(yMax(rps)).toBeGreaterThanOrEqual(583);
    expect(yMax(rps)).toBeLessThanOrEqual(1000);
    const marks = datasets(rps).filter((d) => d.type === 'scatter');
    expect(marks.map((d) => [d.label, Math.max(...d.offScale!)])).toEqual([
      ['post-attestation other errors ↑ (above the axis)', 4302],
      ['disabled other errors ↑ (above the axis)', 5002],
    ]);
  });
});

describe('the Mermaid calls-served chart in summary.md', () => {
  it('cuts a spike at the top of the same kind of axis and names it under the chart', async () => {
    const dir = await writeFixtureRun({ parent, name: 'served-spike' });
    // A burst of served calls in one second of disabled's samples.
    const file = path.join(dir, 'disabled.r1', 'samples.ndjson');
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    const at = lines.findIndex((l) => l.includes('"kind":"load"') && l.includes('"t":20000,'));
    expect(at).toBeGreaterThan(0);
    lines[at] = JSON.stringify({ ...JSON.parse(lines[at]!), ok: 9000 });
    await writeFile(file, `${lines.join('\n')}\n`);

    await renderReports(dir, { formats: ['md'] });
    const md = await readFile(path.join(dir, 'summary.md'), 'utf8');
    const served = mermaidBlocks(md).map(parseXyChart)[1]!;
    expect(served.title).toBe('Calls served per second');
    // The others' levels (pre and post 40/s, disabled 520/s) set the axis, not the 9,000.
    expect(served.y.max).toBeGreaterThanOrEqual(520);
    expect(served.y.max).toBeLessThan(2000);
    for (const line of served.lines) for (const v of line) expect(v).toBeLessThanOrEqual(served.y.max);
    expect(Math.max(...served.lines[2]!)).toBe(served.y.max);
    expect(md).toMatch(/Cut at the top of the axis \(a spike would flatten the other lines\): disabled up to [\d,]+\/s\./);
  });
});
