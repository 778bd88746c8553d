// `attestorm export --format openmetrics` read by Prometheus's own tool: `promtool tsdb
// create-blocks-from openmetrics` (the backfill a user runs) turns a recorded run into TSDB blocks
// that `promtool tsdb dump` reads back sample for sample, and `promtool check metrics` lints the
// names, units and help texts. Skipped, saying so, where promtool is not installed (Debian: the
// prometheus package; .ci/run installs it).
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportRun } from '../../src/export/index.js';
import { writeFixtureRun } from '../report/fixture.js';
import { copyRecordedRun } from '../report/recorded-runs.js';
import { parseOpenMetrics, type OmFamily } from '../support/openmetrics-rules.js';
import { skipNote } from '../support/skip-note.js';

const version = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const promtool = version.status === 0;
if (!promtool) skipNote('promtool.test.ts (the export read by promtool)', `promtool is not on PATH: ${version.error?.message ?? version.stderr}`);

const run = (args: string[], input?: string) => spawnSync('promtool', args, { encoding: 'utf8', timeout: 60_000, ...(input !== undefined ? { input } : {}) });

let parent: string;
let recorded: string;
beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'attestorm-promtool-'));
  recorded = await copyRecordedRun('quick-all-met', parent);
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

/** Backfills `text` into a fresh TSDB and dumps it: one line per sample, `{__name__="…", …} value ms`. */
async function backfill(name: string, text: string): Promise<{ status: number | null; stderr: string; dump: string[] }> {
  const file = path.join(parent, `${name}.om`);
  const db = path.join(parent, `${name}-tsdb`);
  await writeFile(file, text);
  const created = run(['tsdb', 'create-blocks-from', 'openmetrics', '--quiet', file, db]);
  if (created.status !== 0) return { status: created.status, stderr: created.stderr, dump: [] };
  // dump opens the database as Prometheus would, write-ahead log included; a backfill writes none.
  await mkdir(path.join(db, 'wal'), { recursive: true });
  const dumped = run(['tsdb', 'dump', db]);
  expect(dumped.status, dumped.stderr).toBe(0);
  // Go writes large values in exponent form (3.3554432e+08): the value is compared as a number.
  const dump = dumped.stdout
    .trimEnd()
    .split('\n')
    .map((line) => {
      const [, series, value, ms] = /^(.*) (\S+) (\d+)$/.exec(line)!;
      return `${series} ${Number(value)} ${ms}`;
    });
  return { status: 0, stderr: created.stderr, dump };
}

/** Each exported sample as dump prints it, sorted: the metric's labels by name, the time in milliseconds. */
function asDumped(families: OmFamily[]): string[] {
  const quote = (v: string) => JSON.stringify(v);
  return families
    .flatMap((f) =>
      f.samples.map((s) => {
        const labels = Object.entries({ __name__: s.name, ...s.labels }).sort(([a], [b]) => (a < b ? -1 : 1));
        return `{${labels.map(([k, v]) => `${k}=${quote(v)}`).join(', ')}} ${s.value} ${Math.round(s.timestamp * 1000)}`;
      }),
    )
    .sort();
}

/**
 * `promtool check metrics` reads the Prometheus text format, not OpenMetrics: there, timestamps are
 * integer milliseconds and a counter's TYPE and HELP name its `_total` samples. The same lines so
 * restated, for its lint rules to judge the names, units and help texts the export writes.
 */
function asTextFormat(openMetrics: string, families: OmFamily[]): string {
  const counters = new Set(families.filter((f) => f.type === 'counter').map((f) => f.name));
  return openMetrics
    .split('\n')
    .map((line) => {
      const meta = /^# (TYPE|HELP|UNIT) (\S+)( .*)?$/.exec(line);
      if (meta) return counters.has(meta[2]!) ? `# ${meta[1]} ${meta[2]}_total${meta[3] ?? ''}` : line;
      if (line.startsWith('#') || line === '') return line;
      const at = line.lastIndexOf(' ');
      return `${line.slice(0, at)} ${Math.round(Number(line.slice(at + 1)) * 1000)}`;
    })
    .join('\n');
}

describe.skipIf(!promtool)(`promtool ${version.stdout?.split('\n')[0]?.replace(/^promtool, version /, '') ?? ''}`, () => {
  it('backfills a recorded run: every exported sample is in the blocks, with its labels, value and time', async () => {
    const text = await exportRun(recorded, 'openmetrics');
    const { status, stderr, dump } = await backfill('recorded', text);
    expect(status, stderr).toBe(0);
    const expected = asDumped(parseOpenMetrics(text));
    expect(expected.length).toBeGreaterThan(2000);
    expect(dump.sort()).toEqual(expected);
  });

  it('backfills a scenario name with a quote, a backslash and a line break as written', async () => {
    const dir = await writeFixtureRun({ parent, name: 'hostile' });
    const file = path.join(dir, 'results.json');
    const results = JSON.parse(await readFile(file, 'utf8'));
    results.scenario.name = 'storm "a"\\b\nc';
    await writeFile(file, JSON.stringify(results));
    const text = await exportRun(dir, 'openmetrics');
    const { status, stderr, dump } = await backfill('hostile', text);
    expect(status, stderr).toBe(0);
    expect(dump.sort()).toEqual(asDumped(parseOpenMetrics(text)));
    expect(dump[0]).toContain('scenario="storm \\"a\\"\\\\b\\nc"');
  });

  it('refuses a file that does not end in # EOF (the backfill does check)', async () => {
    const text = await exportRun(await copyRecordedRun('quick-one-failed', parent), 'openmetrics');
    const { status, stderr } = await backfill('no-eof', text.replace('# EOF\n', ''));
    expect(status).not.toBe(0);
    expect(stderr).toContain('# EOF');
  });

  it('check metrics finds nothing to say about the names, units and help texts', async () => {
    const text = await exportRun(recorded, 'openmetrics');
    const lint = run(['check', 'metrics'], asTextFormat(text, parseOpenMetrics(text)));
    expect(lint.stdout + lint.stderr).toBe('');
    expect(lint.status).toBe(0);
    // It does judge them: a family without its HELP line is reported.
    const noHelp = run(['check', 'metrics'], asTextFormat(text.replace(/^# HELP attestorm_agent_memory_bytes .*\n/m, ''), parseOpenMetrics(text)));
    expect(noHelp.status).not.toBe(0);
    expect(noHelp.stdout + noHelp.stderr).toContain('attestorm_agent_memory_bytes no help text');
  });
});
