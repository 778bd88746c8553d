// The `attestorm report` command end to end: a real child process running bin/attestorm.js.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFixtureRun } from '../report/fixture.js';

const run = promisify(execFile);
const BIN = path.resolve('bin/attestorm.js');

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

let parent: string;
let dir: string;

beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'attestorm-cli-report-'));
  dir = await writeFixtureRun({ parent, name: 'run' });
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

describe('attestorm report', () => {
  it('writes every format into the run folder and lists the files on stdout', async () => {
    const { code, stdout, stderr } = await cli(['report', dir]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const expected = ['memory.png', 'rps.png', 'inflight.png', 'rejections.png', 'report.html', 'summary.md', 'report.json'];
    expect(stdout.trim().split('\n')).toEqual(expected.map((f) => path.join(dir, f)));
    for (const f of expected) expect((await stat(path.join(dir, f))).size).toBeGreaterThan(100);
    const json = JSON.parse(await readFile(path.join(dir, 'report.json'), 'utf8'));
    expect(json.runs[0].rows).toHaveLength(3);
    expect(json.comparison).toBeNull();
  });

  it('compares several runs into --out with the formats asked for', async () => {
    const other = await writeFixtureRun({ parent, name: 'other', seed: 5 });
    const out = path.join(parent, 'cmp');
    const { code } = await cli(['report', dir, other, '--out', out, '--format', 'md,json']);
    expect(code).toBe(0);
    expect((await readdir(out)).sort()).toEqual(['baseline.md', 'report.json', 'summary.md']);
  });

  it('exits 2 naming the folder when it does not exist', async () => {
    const missing = path.join(parent, 'missing');
    const { code, stderr } = await cli(['report', missing]);
    expect(code).toBe(2);
    expect(stderr).toContain(`run folder ${missing} does not exist`);
  });

  it('exits 2 on an unknown format', async () => {
    const { code, stderr } = await cli(['report', dir, '--format', 'html,pdf']);
    expect(code).toBe(2);
    expect(stderr).toContain('unknown report format "pdf"');
  });
});
