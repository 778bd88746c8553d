import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateFailed, loadHistory, parseTolerances, renderHistoryHtml, type HistoryModel } from '../../src/ci/index.js';
import { ConfigError } from '../../src/errors.js';
import { writeHistoryFolder } from './history-fixture.js';

const run = promisify(execFile);
const CLI = path.resolve(import.meta.dirname, '../../bin/attestorm.js');

let tmp: string;
let root: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'attestorm-history-'));
  root = await writeHistoryFolder(tmp);
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('loadHistory', () => {
  it('needs --scenario when the folder holds runs of several scenarios', () => {
    expect(() => loadHistory(root)).toThrow(ConfigError);
    expect(() => loadHistory(root)).toThrow(`history: ${root} holds runs of several scenarios: quick (5 runs), scaled (1 runs); pick one with --scenario`);
    expect(() => loadHistory(root, { scenario: 'nope' })).toThrow('history --scenario nope: no run of that scenario under');
  });

  it('orders runs by start time, gates each against the one before, and says what it left out', () => {
    const m = loadHistory(root, { scenario: 'quick' });
    expect(m.runs.map((r) => r.dir)).toEqual(['old', 'nightly-1', 'nightly-2', 'nightly-3', 'nested/nightly-4']);
    expect(m.runs.map((r) => gateFailed(r))).toEqual([false, false, false, false, true]);
    // The schemaVersion 1 folder joins the trend converted, but is not gated across the change.
    expect(m.runs[0]!.upgradedFrom).toBe(1);
    expect(m.runs[0]!.byVariant['pre-attestation']!.peakMemoryBytes).toBe(97 * 2 ** 20);
    expect(m.runs[1]!.gate).toEqual({ against: 'old', refused: 'results schemaVersion 1 → 3: a baseline gate refuses another schema' });
    const gate = m.runs[4]!.gate!;
    expect('regressions' in gate && gate.regressions).toEqual([
      'pre-attestation peak memory +40.0% (new 140.0 MiB > baseline 100.0 MiB + 10% (10.0 MiB) = 110.0 MiB)',
      'pre-attestation OOM kills +1 (new 1 > baseline 0 + 0 = 0)',
      'pre-attestation bystander success −2.0 pt (new 97.0% < baseline 99.0% − 1 pt = 98.0%)',
    ]);
    expect(m.runs[4]!.commit).toBe('4'.repeat(40));
    expect(m.skipped).toEqual([expect.stringMatching(/^broken: history: .*broken\/results\.json is not valid JSON/), 'other-scenario: scenario scaled']);
  });

  it('a looser gate passes the same history', () => {
    const m = loadHistory(root, { scenario: 'quick', tolerances: parseTolerances(['50%', 'oomKills=1', 'bystanderSuccess=5%']) });
    expect(m.runs.some((r) => gateFailed(r))).toBe(false);
  });

  it('a folder with no run folder is a clear error', () => {
    expect(() => loadHistory(path.join(root, 'old', 'nothing'))).toThrow(/is not a folder/);
    expect(() => loadHistory(path.join(root, 'broken'))).toThrow(/^history: no readable run folder under .*broken \(\.: history: .* is not valid JSON/);
  });
});

describe('renderHistoryHtml', () => {
  let m: HistoryModel;
  let html: string;
  beforeAll(() => {
    m = loadHistory(root, { scenario: 'quick' });
    html = renderHistoryHtml(m);
  });

  it('is self-contained: Chart.js inlined, a CSP that forbids requests, no external URL', () => {
    expect(html).toContain('content="default-src &#39;none&#39;;');
    expect(html).toMatch(/Chart\.js v4/);
    expect(html).not.toMatch(/(src|href)="https?:/);
  });

  it('embeds three charts and the tooltip facts per run', () => {
    const json = /<script type="application\/json" id="attestorm-history">([^<]*)<\/script>/.exec(html)![1]!;
    const data = JSON.parse(json) as {
      charts: { id: string; config: { data: { labels: string[]; datasets: { label: string; data: (number | null)[] }[] } } }[];
      runs: { commit: string; gate: string }[];
    };
    expect(data.charts.map((c) => c.id)).toEqual(['peak-memory', 'oom-kills', 'bystander-success']);
    const mem = data.charts[0]!.config.data;
    expect(mem.labels).toEqual(['2026-11-26 02:00', '2026-11-27 02:00', '2026-11-28 02:00', '2026-11-29 02:00', '2026-11-30 02:00']);
    expect(mem.datasets.find((d) => d.label === 'pre-attestation')!.data).toEqual([97, 98, 101, 100, 140]);
    expect(data.charts[2]!.config.data.datasets.map((d) => d.label)).toEqual(['pre-attestation']);
    expect(data.runs[1]!.gate).toBe('not gated: results schemaVersion 1 → 3: a baseline gate refuses another schema');
    expect(data.runs[4]).toMatchObject({ commit: '444444444444', gate: 'gate vs nightly-3: FAILED — 3 regressed' });
  });
});

// Each spawns the CLI through tsx (several seconds on a busy machine).
describe('attestorm history (CLI)', { timeout: 90_000 }, () => {
  it('writes history.html and history.json and names the failing run on stderr', async () => {
    const out = path.join(tmp, 'out');
    const { stdout, stderr } = await run(process.execPath, [CLI, 'history', root, '--scenario', 'quick', '--out', out]);
    expect(stdout.trim().split('\n')).toEqual([path.join(out, 'history.html'), path.join(out, 'history.json')]);
    expect(stderr).toContain('quick: 5 runs, 1 would have failed a baseline gate against the previous run (nested/nightly-4); 2 folders left out');
    const json = JSON.parse(await readFile(path.join(out, 'history.json'), 'utf8')) as HistoryModel;
    expect(json.runs).toHaveLength(5);
  });

  it('bad flags exit 2 with the rule, before reading anything', async () => {
    const err = await run(process.execPath, [CLI, 'history', root, '--tolerance', 'peakMemory=lots']).catch((e: { code: number; stderr: string }) => e);
    expect((err as { code: number }).code).toBe(2);
    expect((err as { stderr: string }).stderr).toContain('--tolerance "peakMemory=lots": peakMemory takes a percentage like peakMemory=5%');
  });
});
