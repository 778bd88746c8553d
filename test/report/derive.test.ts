import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { buildChartSpecs, deriveReport, loadRun, parseFormats, renderReports } from '../../src/report/index.js';
import { writeFixtureRun } from './fixture.js';

let parent: string;
let runDir: string;

beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'attestorm-derive-'));
  runDir = await writeFixtureRun({ parent, name: 'baseline' });
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

describe('table rows', () => {
  it('has one row per placement with the results figures, in MiB and percent of the limit', async () => {
    const run = await loadRun(runDir);
    const data = deriveReport([run]);
    const rows = data.runs[0]!.rows;
    expect(rows.map((r) => r.variant)).toEqual(['pre-attestation', 'post-attestation', 'disabled']);
    for (const [i, row] of rows.entries()) {
      const p = run.results.variants[i]!;
      expect(row.memoryLimitMiB).toBe(320);
      expect(row.peakMemoryMiB).toBeCloseTo(p.peakMemoryBytes! / 2 ** 20, 6);
      expect(row.peakPercentOfLimit).toBeCloseTo((100 * p.peakMemoryBytes!) / p.memoryLimitBytes, 6);
      expect(row.okRps).toBe(p.okRps);
      expect(row.okP99Ms).toBe(p.latency.ok!.p99Ms);
    }
    const [pre, post, disabled] = rows;
    expect(pre!.oomKills).toBe(0);
    expect(pre!.peakMemoryMiB).toBeGreaterThan(130);
    expect(pre!.peakMemoryMiB).toBeLessThan(140);
    expect(pre!.expectationsFailed).toBe(0);
    expect(post!.expectationsFailed).toBe(1);
    expect(post!.expectations.find((e) => e.verdict === 'failed')!.message).toMatch(/^peak working set 3\d\d\.\d MiB > 200\.0 MiB$/);
    expect(disabled!.oomKills).toBe(1);
    expect(disabled!.restarts).toBe(1);
    expect(disabled!.peakPercentOfLimit).toBe(100);
    expect(disabled!.errorRps).toBeGreaterThan(0);
  });
});

describe('verdict', () => {
  it('names survivors and OOM-killed placements and flags ratios capped by an OOM kill', async () => {
    const { verdict } = deriveReport([await loadRun(runDir)]).runs[0]!;
    expect(verdict.survived).toEqual(['pre-attestation', 'post-attestation']);
    expect(verdict.oomKilled).toEqual(['disabled']);
    expect(verdict.ratios.disabledCapped).toBe(true);
    expect(verdict.expectationsPassed).toBe(false);
    expect(verdict.text).toContain('disabled OOM-killed once');
    expect(verdict.text).toContain('upper bounds');
    expect(verdict.text).toContain('Expectations not met (1 failed)');
  });

  it("reproduces the field's 512 MiB ratios when nothing is killed", async () => {
    const dir = await writeFixtureRun({
      parent,
      name: 'field-512',
      memoryLimitMiB: 512,
      placements: [
        { name: 'pre-attestation', peakMiB: 138.4 },
        { name: 'post-attestation', peakMiB: 307.5 },
        { name: 'disabled', peakMiB: 341.0 },
      ],
    });
    const { verdict, rows } = deriveReport([await loadRun(dir)]).runs[0]!;
    expect(verdict.oomKilled).toEqual([]);
    expect(verdict.ratios.disabledCapped).toBe(false);
    // The fixture's memory has ±4% noise under the target peak, so the ratios land near the field's.
    expect(verdict.ratios.preToDisabled).toBeCloseTo(rows[0]!.peakMemoryMiB! / rows[2]!.peakMemoryMiB!, 10);
    expect(Math.abs(verdict.ratios.preToDisabled! - 0.41)).toBeLessThan(0.02);
    expect(Math.abs(verdict.ratios.postToDisabled! - 0.9)).toBeLessThan(0.02);
    expect(verdict.text).toMatch(/pre\/disabled 0\.4\d \(published load tests ≈0\.41\), post\/disabled 0\.\d\d \(published load tests ≈0\.90\)\./);
    expect(verdict.expectationsPassed).toBe(true);
  });
});

describe('series', () => {
  it('breaks the memory line at the OOM kill and marks the kill at the limit', async () => {
    const { series } = deriveReport([await loadRun(runDir)]);
    expect(series.memory).toHaveLength(3);
    const disabled = series.memory.find((s) => s.variant === 'disabled')!;
    expect(disabled.points.some((p) => p.y === null)).toBe(true);
    expect(series.oomKills).toHaveLength(1);
    expect(series.oomKills[0]!.points[0]!.y).toBe(320);
    expect(series.limits).toEqual([{ label: 'limit 320 MiB', mib: 320 }]);
    // disabled rejects nothing, so it has no rejected line
    expect(series.rejectedRps.map((s) => s.variant)).toEqual(['pre-attestation', 'post-attestation']);
  });

  it('thins a long memory series for the chart without losing its peak', async () => {
    const dir = await writeFixtureRun({ parent, name: 'long', loadSeconds: 240, placements: [{ name: 'post-attestation', peakMiB: 300 }] });
    const run = await loadRun(dir);
    const samples = run.samples.get('post-attestation.r1')!.filter((s) => s.kind === 'memory');
    expect(samples.length).toBeGreaterThan(2000);
    const line = deriveReport([run]).series.memory[0]!;
    expect(line.points.length).toBeLessThanOrEqual(1500);
    const peak = Math.max(...samples.map((s) => (s.kind === 'memory' ? s.usageBytes : 0))) / 2 ** 20;
    expect(Math.max(...line.points.map((p) => p.y ?? 0))).toBe(peak);
  });

  it('orders points by time even when the samples file does not (a retried agent start)', async () => {
    const dir = await writeFixtureRun({ parent, name: 'retried-start' });
    const file = path.join(dir, 'pre-attestation.r1', 'samples.ndjson');
    const text = await readFile(file, 'utf8');
    // The runner's first, failed agent start logs lines before the retry's, with earlier times.
    const failed = [
      { kind: 'event', t: -60_000, type: 'agent-start' },
      { kind: 'event', t: -59_000, type: 'agent-exit', detail: 'exited with code 2' },
    ];
    const late = {
      kind: 'memory',
      t: -5_000,
      usageBytes: 2 ** 20,
      workingSetBytes: 2 ** 20,
      rssBytes: null,
      peakBytes: 2 ** 20,
      limitBytes: 320 * 2 ** 20,
      cpuSeconds: 0,
    };
    await writeFile(file, failed.map((l) => JSON.stringify(l)).join('\n') + '\n' + text + JSON.stringify(late) + '\n');
    const { series } = deriveReport([await loadRun(dir)]);
    const pre = series.memory.find((s) => s.variant === 'pre-attestation')!;
    const xs = pre.points.map((p) => p.x);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    expect(xs[0]).toBe(-5);
    // The failed start happened before the line began, so it does not open a gap in it.
    expect(pre.points.some((p) => p.y === null)).toBe(false);
  });

  it('charts the storm workers calling only for a variant whose storm changed size (a burst)', async () => {
    const dir = await writeFixtureRun({ parent, name: 'burst' });
    const rewrite = async (placement: string, workers: (t: number) => number) => {
      const file = path.join(dir, `${placement}.r1`, 'samples.ndjson');
      const lines = (await readFile(file, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      for (const l of lines) if (l.kind === 'load') Object.assign(l, { stormPods: workers(l.t) / 4, stormWorkers: workers(l.t) });
      await writeFile(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    };
    await rewrite('pre-attestation', (t) => (t >= 3000 && t < 6000 ? 12 : 4));
    await rewrite('disabled', () => 4);
    const data = deriveReport([await loadRun(dir)]);
    expect(data.series.stormWorkers.map((s) => s.variant)).toEqual(['pre-attestation']);
    const ys = data.series.stormWorkers[0]!.points.map((p) => p.y);
    // Three seconds of the wave, the storm's own 4 workers before and after.
    expect(ys.filter((y) => y === 12)).toHaveLength(3);
    expect(ys.join(' ')).toMatch(/^(4 )+12 12 12( 4)+$/);
    expect(buildChartSpecs(data).map((c) => c.id)).toContain('storm');
    // The plain fixture (no burst, older folders without the field) draws no such chart.
    expect(buildChartSpecs(deriveReport([await loadRun(runDir)])).map((c) => c.id)).not.toContain('storm');
  });
});

describe('deltas between runs', () => {
  it('compares each placement of a later run with the baseline', async () => {
    const after = await writeFixtureRun({
      parent,
      name: 'after',
      seed: 7,
      placements: [
        { name: 'pre-attestation', peakMiB: 100 },
        { name: 'post-attestation', peakMiB: 400 },
        { name: 'disabled', peakMiB: 341 },
      ],
    });
    const base = await loadRun(runDir);
    const later = await loadRun(after);
    const data = deriveReport([base, later]);
    expect(data.comparison).toHaveLength(3);
    const pre = data.comparison!.find((d) => d.variant === 'pre-attestation')!;
    expect(pre.baselineRun).toBe('baseline');
    expect(pre.run).toBe('after');
    const basePeak = base.results.variants[0]!.peakMemoryBytes! / 2 ** 20;
    const laterPeak = later.results.variants[0]!.peakMemoryBytes! / 2 ** 20;
    expect(pre.peakMemoryMiB.delta).toBeCloseTo(laterPeak - basePeak, 6);
    expect(pre.peakMemoryMiB.percent).toBeCloseTo((100 * (laterPeak - basePeak)) / basePeak, 6);
    const post = data.comparison!.find((d) => d.variant === 'post-attestation')!;
    expect(post.oomKills).toEqual({ baseline: 0, value: 1, delta: 1, percent: null });
    expect(post.okRps.delta).toBeCloseTo(later.results.variants[1]!.okRps - base.results.variants[1]!.okRps, 6);
    expect(post.okP99Ms.value).toBe(later.results.variants[1]!.latency.ok!.p99Ms);
    // Labels in a comparison carry the run name so the lines of both runs can be told apart.
    expect(data.series.memory.map((s) => s.label)).toContain('after · disabled');
  });

  it('writes the comparison into --out and keeps the run folders untouched', async () => {
    const out = path.join(parent, 'compare-out');
    const other = await writeFixtureRun({ parent, name: 'other', seed: 3 });
    const { files } = await renderReports([runDir, other], { outDir: out, formats: ['md', 'json'] });
    expect(files.map((f) => path.relative(out, f)).sort()).toEqual(['report.json', 'summary.md']);
    const md = await readFile(path.join(out, 'summary.md'), 'utf8');
    expect(md).toContain('### Against the baseline (baseline)');
    expect(md).toMatch(/\| other vs baseline \| pre-attestation \|/);
    const json = JSON.parse(await readFile(path.join(out, 'report.json'), 'utf8'));
    expect(json.comparison).toHaveLength(3);
    expect(json.runs.map((r: { label: string }) => r.label)).toEqual(['baseline', 'other']);
  });
});

describe('summary.md', () => {
  it('says modeled costs and behaviours per variant in words, neither JSON nor [object Object]', async () => {
    const dir = await writeFixtureRun({ parent, name: 'costs' });
    const file = path.join(dir, 'results.json');
    const results = JSON.parse(await readFile(file, 'utf8'));
    results.scenario.modeledCosts = { 'pre-attestation': { cancelAbandoned: false, podListWorkingSet: '22Mi' } };
    await writeFile(file, JSON.stringify(results));
    const out = path.join(parent, 'costs-out');
    await renderReports(dir, { outDir: out, formats: ['md'] });
    const md = await readFile(path.join(out, 'summary.md'), 'utf8');
    expect(md).toContain(
      '- pre-attestation: attestations run on after their caller gave up (model.cancelAbandoned false); each parsed kubelet pod list holds 22Mi more (model.podListWorkingSet)',
    );
    expect(md).not.toContain('={"');
    expect(md).not.toContain('[object Object]');
  });
});

describe("the workers' client", () => {
  it('is a column of the tables and, where it is not the one asked for, a sentence with the reason in the verdict', async () => {
    const dir = await writeFixtureRun({ parent, name: 'clients' });
    const file = path.join(dir, 'results.json');
    const results = JSON.parse(await readFile(file, 'utf8'));
    const why = 'client native unavailable, running h2 workers instead: no C compiler: "cc" is not an executable in PATH (/usr/bin)';
    results.variants[0].loadClient = { requested: 'native', ran: 'native' };
    results.variants[1].loadClient = { requested: 'native', ran: 'h2', reason: why };
    await writeFile(file, JSON.stringify(results));
    const { rows, verdict } = deriveReport([await loadRun(dir)]).runs[0]!;
    expect(rows.map((r) => r.loadClient)).toEqual([results.variants[0].loadClient, results.variants[1].loadClient, null]);
    expect(verdict.text).toContain(
      `The storm's workers ran the h2 client, not native as asked, for post-attestation (${why}): worker memory and calls per CPU-second are h2's.`,
    );
    const out = path.join(parent, 'clients-out');
    await renderReports(dir, { outDir: out, formats: ['md', 'html'] });
    const md = await readFile(path.join(out, 'summary.md'), 'utf8');
    expect(md).toMatch(/\| workers' client \|/);
    expect(md).toMatch(/\| pre-attestation \|.*\| native \|/);
    expect(md).toMatch(/\| post-attestation \|.*\| h2 \(native asked for\) \|/);
    const html = await readFile(path.join(out, 'report.html'), 'utf8');
    expect(html).toContain('h2 (native asked for)');
    expect(html).toContain('workers&#39; client');

    // Where every variant ran the client asked for, the verdict says nothing of it.
    results.variants[1].loadClient = { requested: 'native', ran: 'native' };
    await writeFile(file, JSON.stringify(results));
    expect(deriveReport([await loadRun(dir)]).runs[0]!.verdict.text).not.toContain('client');
  });
});

describe('reading run folders', () => {
  it('tolerates a truncated last NDJSON line of an interrupted run', async () => {
    const dir = await writeFixtureRun({ parent, name: 'truncated', truncateLastLine: true });
    const run = await loadRun(dir);
    expect(run.warnings.filter((w) => w.includes('truncated last line'))).toHaveLength(3);
    expect(run.samples.get('disabled.r1')!.length).toBeGreaterThan(100);
  });

  it('rejects a malformed line in the middle of the samples, naming file and line', async () => {
    const dir = await writeFixtureRun({ parent, name: 'corrupt' });
    const file = path.join(dir, 'pre-attestation.r1', 'samples.ndjson');
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[5] = '{"kind":"memory",';
    await writeFile(file, lines.join('\n'));
    await expect(loadRun(dir)).rejects.toThrow(/samples\.ndjson:6 is not a JSON sample line/);
  });

  it("falls back to the samples' histograms when results.json lacks latency", async () => {
    const dir = await writeFixtureRun({ parent, name: 'no-latency' });
    const file = path.join(dir, 'results.json');
    const results = JSON.parse(await readFile(file, 'utf8'));
    const expected = results.variants[0].latency.ok;
    for (const p of results.variants) p.latency = {};
    await writeFile(file, JSON.stringify(results));
    const report = deriveReport([await loadRun(dir)]).runs[0]!;
    const ok = report.latency.find((l) => l.variant === 'pre-attestation' && l.outcome === 'ok')!;
    expect(ok.source).toBe('samples');
    expect(ok.count).toBe(expected.count);
    expect(ok.p99Ms).toBeCloseTo(expected.p99Ms, 6);
    expect(ok.p50Ms).toBeCloseTo(expected.p50Ms, 6);
  });

  it('tells a missing folder, a folder without results.json and a schema mismatch apart', async () => {
    await expect(loadRun(path.join(parent, 'nope'))).rejects.toThrow(ConfigError);
    await expect(loadRun(path.join(parent, 'nope'))).rejects.toThrow(/nope does not exist/);
    const empty = await mkdtemp(path.join(parent, 'empty-'));
    await expect(loadRun(empty)).rejects.toThrow(/has no results\.json/);
    const dir = await writeFixtureRun({ parent, name: 'v99' });
    const file = path.join(dir, 'results.json');
    const results = JSON.parse(await readFile(file, 'utf8'));
    results.schemaVersion = 99;
    await writeFile(file, JSON.stringify(results));
    await expect(loadRun(dir)).rejects.toThrow(/schemaVersion 99, this attestorm reads schemaVersion 1/);
    await appendFile(path.join(empty, 'results.json'), '{ not json');
    await expect(loadRun(empty)).rejects.toThrow(/is not valid JSON/);
  });

  it('refuses unknown formats and run folders that escape the run folder', async () => {
    expect(() => parseFormats('html,pdf')).toThrow(/unknown report format "pdf"/);
    expect(parseFormats('md, json,md')).toEqual(['md', 'json']);
    await expect(renderReports(runDir, { formats: ['svg' as never] })).rejects.toThrow(ConfigError);
    const dir = await writeFixtureRun({ parent, name: 'escape' });
    const file = path.join(dir, 'results.json');
    const results = JSON.parse(await readFile(file, 'utf8'));
    results.variants[0].runDirs = ['../../etc'];
    await writeFile(file, JSON.stringify(results));
    await expect(loadRun(dir)).rejects.toThrow(/invalid folder name/);
  });
});

describe('a run compared with a baseline', () => {
  it("draws each variant's baseline peak on the memory chart, and the comparison as a section of the page", async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'attestorm-baseline-'));
    const dir = await writeFixtureRun({ parent, name: 'compared' });
    const file = path.join(dir, 'results.json');
    const results = JSON.parse(await readFile(file, 'utf8'));
    results.baseline = {
      from: 'reports/before/results.json',
      figures: [{ variant: 'pre-attestation', figure: 'peakMemory', before: 100 * 2 ** 20, after: 135 * 2 ** 20 }],
    };
    await writeFile(file, JSON.stringify(results));
    const data = deriveReport([await loadRun(dir)]);
    expect(data.series.baselinePeaks).toEqual([{ variant: 'pre-attestation', label: 'baseline peak · pre-attestation', mib: 100 }]);
    await renderReports(dir, {
      formats: ['html'],
      extraSections: [{ title: 'Against the baseline (before)', html: '<table data-testid="baseline"></table>', markdown: [] }],
    });
    const html = await readFile(path.join(dir, 'report.html'), 'utf8');
    expect(html).toContain('<h2>Against the baseline (before)</h2>');
    expect(html).toContain('baseline peak · pre-attestation');
    await rm(parent, { recursive: true, force: true });
  });
});
