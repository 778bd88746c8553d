import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildChartSpecs, deriveReport, loadRun, type ChartSpec } from '../../src/report/index.js';
import { writeFixtureRun } from './fixture.js';
import { copyRecordedRun, RECORDED_RUNS } from './recorded-runs.js';

const MiB = 2 ** 20;
let parent: string;

beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'attestorm-scale-'));
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

type Dataset = { label: string; type?: string; data: { x: number; y: number | null }[] };
const yMax = (spec: ChartSpec) => (spec.config.options as { scales: { y: { max: number } } }).scales.y.max;
const labels = (spec: ChartSpec) => (spec.config.data.datasets as unknown as Dataset[]).map((d) => d.label);

describe('the memory chart axis (shared by the page and memory.png)', () => {
  it.each(RECORDED_RUNS)('%s: fits the measured peaks and marks the 1 GiB limit above them at the top edge', async (name) => {
    const run = await loadRun(await copyRecordedRun(name, parent));
    const memory = buildChartSpecs(deriveReport([run])).find((c) => c.id === 'memory')!;
    const peak = Math.max(...run.results.variants.map((v) => (v.peakMemoryBytes ?? 0) / MiB));
    expect(yMax(memory)).toBeGreaterThanOrEqual(peak);
    expect(yMax(memory)).toBeLessThanOrEqual(1.6 * peak);
    // The 128 MiB limit is inside the axis and drawn as a line; 1 GiB is off the scale, an arrow at the top.
    expect(labels(memory)).toContain('limit 128 MiB');
    const above = (memory.config.data.datasets as unknown as Dataset[]).find((d) => d.label.startsWith('limit 1 GiB'))!;
    expect(above.label).toBe('limit 1 GiB ↑ (above the axis)');
    expect(above.data.map((p) => p.y)).toEqual([yMax(memory)]);
    expect(memory.description).toContain('the limit of 1 GiB, far above it, is marked ▲ at the top edge');
  });

  it('widens the axis to a limit just above the peaks, so its line shows', async () => {
    const dir = await writeFixtureRun({ parent, name: 'near-limit', memoryLimitMiB: 400, placements: [{ name: 'pre-attestation', peakMiB: 300 }] });
    const memory = buildChartSpecs(deriveReport([await loadRun(dir)])).find((c) => c.id === 'memory')!;
    expect(labels(memory)).toContain('limit 400 MiB');
    expect(labels(memory).some((l) => l.includes('above the axis'))).toBe(false);
    expect(yMax(memory)).toBeGreaterThanOrEqual(400);
    expect(yMax(memory)).toBeLessThanOrEqual(500);
  });
});
