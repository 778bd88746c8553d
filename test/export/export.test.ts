// `attestorm export` on run folders: the OpenMetrics text checked against the format's rules
// (test/support/openmetrics-rules.ts; promtool.test.ts has Prometheus read it), the CSV read back, and the
// command itself writing a file, to stdout and into a pipe closed early.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeLabelValue, exportRun, MEASURES, parseExportFormat } from '../../src/export/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { writeFixtureRun } from '../report/fixture.js';
import { copyRecordedRun } from '../report/recorded-runs.js';
import { parseOpenMetrics } from '../support/openmetrics-rules.js';

let parent: string;
let recorded: string;
beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'attestorm-export-'));
  recorded = await copyRecordedRun('quick-all-met', parent);
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

describe('OpenMetrics', () => {
  it('a recorded run follows the format: families together, TYPE/UNIT/HELP, attestorm_ names with unit suffixes, timestamps increasing, # EOF', async () => {
    const text = await exportRun(recorded, 'openmetrics');
    const families = parseOpenMetrics(text);
    expect(families.map((f) => f.name)).toEqual([
      'attestorm_agent_memory_bytes',
      'attestorm_agent_memory_limit_bytes',
      'attestorm_storm_calls_per_second',
      'attestorm_storm_workers',
      'attestorm_bystander_success_ratio',
      'attestorm_agent_inflight_attestations',
      'attestorm_agent_open_connections',
      'attestorm_agent_oom_kills',
    ]);
    for (const f of families) {
      expect(f.name).toMatch(/^attestorm_/);
      expect(f.help).toBeTruthy();
      if (f.name.endsWith('_bytes')) expect(f.unit).toBe('bytes');
      for (const s of f.samples) expect(Object.keys(s.labels).slice(0, 3)).toEqual(['scenario', 'variant', 'rep']);
    }
    expect(families.filter((f) => f.type !== 'counter').every((f) => f.type === 'gauge')).toBe(true);
    const memory = families[0]!.samples;
    expect(new Set(memory.map((s) => s.labels['variant']))).toEqual(new Set(['pre-attestation', 'post-attestation', 'disabled', 'disabled-unbounded']));
    // Absolute time: the run's start plus t (the recorded run started 2026-12-01T22:55:51.122Z; warm-up is negative t).
    const start = Date.parse('2026-12-01T22:55:51.122Z') / 1000;
    expect(Math.min(...memory.map((s) => s.timestamp))).toBeGreaterThan(start - 60);
    expect(Math.max(...memory.map((s) => s.timestamp))).toBeLessThan(start + 60);
    const calls = families[2]!.samples;
    expect(new Set(calls.map((s) => s.labels['outcome']))).toEqual(new Set(['ok', 'rate_limited', 'deadline_exceeded', 'error']));
    // Two of the four were OOM-killed once each; the counter starts at 0.
    const kills = families.at(-1)!.samples;
    expect(kills.every((s) => s.name === 'attestorm_agent_oom_kills_total')).toBe(true);
    expect(kills.filter((s) => s.value === 1).map((s) => s.labels['variant'])).toEqual(['post-attestation', 'disabled']);
  });

  it('escapes label values: a scenario named with a quote, a backslash and a line break reads back as written', async () => {
    const dir = await writeFixtureRun({ parent, name: 'hostile' });
    const file = path.join(dir, 'results.json');
    const results = JSON.parse(await readFile(file, 'utf8'));
    results.scenario.name = 'storm "a"\\b\nc';
    await writeFile(file, JSON.stringify(results));
    const families = parseOpenMetrics(await exportRun(dir, 'openmetrics'));
    expect(families[0]!.samples[0]!.labels['scenario']).toBe('storm "a"\\b\nc');
    expect(escapeLabelValue('a"b\\c\nd')).toBe('a\\"b\\\\c\\nd');
  });

  it('the rules catch what a parser would refuse', () => {
    const good = '# TYPE a_bytes gauge\n# UNIT a_bytes bytes\n# HELP a_bytes help\na_bytes{x="1"} 1 10.5\na_bytes{x="1"} 2 11\n# EOF\n';
    expect(parseOpenMetrics(good)).toHaveLength(1);
    expect(() => parseOpenMetrics(good.replace('# EOF\n', ''))).toThrow(/EOF/);
    expect(() => parseOpenMetrics(good.replace('2 11', '2 10'))).toThrow(/timestamps increase/);
    expect(() => parseOpenMetrics(good.replace('UNIT a_bytes bytes', 'UNIT a_bytes seconds'))).toThrow(/named …_seconds/);
    expect(() => parseOpenMetrics(good.replace('x="1"} 1', 'x="1\\t"} 1'))).toThrow(/escape/);
    expect(() => parseOpenMetrics(good.replace('# EOF', '# TYPE b gauge\nb 1 1\n# TYPE a_bytes gauge\na_bytes 1 1\n# EOF'))).toThrow(/resumed/);
    expect(() => parseOpenMetrics(good.replace('a_bytes{x="1"} 2 11', 'a_bytes{x="2"} 2 11\na_bytes{x="1"} 3 12'))).toThrow(/not together/);
    expect(() => parseOpenMetrics(good.replace('gauge', 'counter'))).toThrow(/does not belong/);
  });
});

describe('CSV', () => {
  it('a header, then one row per sample time per variant, increasing within each variant, every row as wide as the header', async () => {
    const lines = (await exportRun(recorded, 'csv')).trimEnd().split('\n');
    const header = lines[0]!.split(',');
    expect(header.slice(0, 5)).toEqual(['timestamp', 't_seconds', 'scenario', 'variant', 'rep']);
    expect(header.slice(5)).toEqual(MEASURES.map((m) => m.column));
    const rows = lines.slice(1).map((l) => l.split(','));
    for (const r of rows) expect(r).toHaveLength(header.length);
    const last = new Map<string, number>();
    for (const r of rows) {
      expect(r[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const key = `${r[3]} ${r[4]}`;
      const t = Number(r[1]);
      if (last.has(key)) expect(t).toBeGreaterThan(last.get(key)!);
      last.set(key, t);
    }
    expect([...last.keys()]).toEqual(['pre-attestation 1', 'post-attestation 1', 'disabled 1', 'disabled-unbounded 1']);
    // Memory every 100 ms: a row of the first second holds the agent's memory and its limit.
    expect(rows.some((r) => r[3] === 'pre-attestation' && Number(r[5]) > 2 ** 20 && r[6] === String(128 * 2 ** 20))).toBe(true);
  });

  it('quotes a field with a comma or a quote', async () => {
    const dir = await writeFixtureRun({ parent, name: 'comma' });
    const file = path.join(dir, 'results.json');
    const results = JSON.parse(await readFile(file, 'utf8'));
    results.scenario.name = 'a, "b"';
    await writeFile(file, JSON.stringify(results));
    expect((await exportRun(dir, 'csv')).split('\n')[1]).toContain(',"a, ""b""",pre-attestation,1,');
  });
});

describe('attestorm export', () => {
  const cli = (...args: string[]) =>
    spawnSync('sh', ['-c', `node bin/attestorm.js export ${args.join(' ')}`], { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 120_000 });

  it('writes --out, prints to stdout, and stops quietly when the reader stops (| head)', () => {
    const out = path.join(parent, 'run.om');
    const file = cli(recorded, '--format', 'openmetrics', '--out', out);
    expect(file.status, file.stderr).toBe(0);
    expect(parseOpenMetrics(readFileSync(out, 'utf8')).length).toBeGreaterThan(5);
    // 150 kB of CSV: far more than a pipe holds, so the writer meets the closed pipe.
    const piped = cli(recorded, '--format', 'csv', '| head -3');
    expect(piped.stderr).toBe('');
    expect(piped.stdout.split('\n')[0]).toMatch(/^timestamp,t_seconds,scenario,variant,rep,/);
  });

  it('refuses an unknown format and a folder that is not a run, naming them', () => {
    expect(() => parseExportFormat('json')).toThrow('--format must be one of openmetrics, csv, got "json"');
    const bad = cli(parent, '--format', 'csv');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('has no results.json');
  });
});
