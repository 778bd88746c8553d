// SIGINT mid-run through the real CLI: exit 130, results.json marked interrupted with the samples
// taken so far, and no process or cgroup of the run left behind.
import { execFileSync, spawn, type StdioOptions } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { parseNdjson } from '../../src/sample/index.js';
import type { RunResults } from '../../src/scenario/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';

const { host, reason } = detectCgroupHost();
if (!host) skipNote('every test of interrupt.slow.test.ts', reason);
const dir = mkdtempSync(join(tmpdir(), 'attestorm-int-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CLI = join(PROJECT_ROOT, 'bin/attestorm.js');

/** Starts `attestorm run` on a minute-long scenario of one pod with three workers, writing into `out`. */
function startTinyRun(name: string, out: string, stdio: StdioOptions) {
  const scenario = join(dir, `${name}.yaml`);
  writeFileSync(
    scenario,
    [
      `name: ${name}`,
      'duration: 60s',
      'warmup: 1s',
      'agent:',
      '  memoryLimit: 128Mi',
      '  startTimeout: 60s',
      'load:',
      '  pods: 1',
      '  workersPerPod: 3',
      '',
    ].join('\n'),
  );
  const child = spawn(process.execPath, [CLI, 'run', scenario, '--out', out, '--no-report'], { cwd: PROJECT_ROOT, stdio });
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, exit, samples: join(out, 'pre-attestation.r1', 'samples.ndjson') };
}

/** Waits (two minutes at most) until the load is running: load samples on disk. */
async function untilLoadRuns(samples: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (existsSync(samples) && parseNdjson(readFileSync(samples, 'utf8')).some((l) => l.kind === 'load')) break;
    await sleep(250);
  }
}

function attestorm(...args: string[]): string {
  return execFileSync(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Expects no process naming the run's folders and no memory cgroup of the run; returns the run's
 * temp folder (from the agent's socket path) and id for the checks that differ.
 */
function expectReaped(out: string): { runTmp: string; runId: string } {
  const agentYaml = readFileSync(join(out, 'pre-attestation.r1', 'agent.yaml'), 'utf8');
  const runTmp = /socket: (\/\S+?\/attestorm(?:-\d+)?\/[^/]+)\//.exec(agentYaml)![1]!;
  const runId = runTmp.split('/').pop()!;
  const ps = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n');
  expect(ps.filter((l) => (l.includes(out) || l.includes(runTmp)) && !l.includes('ps -eo'))).toEqual([]);
  expect(existsSync(join(host!.memoryBase, 'attestorm', runId))).toBe(false);
  return { runTmp, runId };
}

describe.skipIf(!host)(`attestorm run interrupted (${reason})`, () => {
  it('exits 130 with results marked interrupted, data kept, everything reaped', async () => {
    const out = join(dir, 'run');
    const { child, exit, samples } = startTinyRun('tiny-interrupt', out, ['ignore', 'pipe', 'pipe']);
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    // Wait until the load is running, then interrupt.
    await untilLoadRuns(samples);
    child.kill('SIGINT');
    const code = await exit;
    expect(code, stderr).toBe(130);

    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as RunResults;
    expect(results.status).toBe('interrupted');
    expect(results.endedAt).not.toBeNull();
    // Nothing that did not run may pass.
    expect(results.passed).toBe(false);
    expect(results.verdict).not.toBe('passed');
    const lines = parseNdjson(readFileSync(samples, 'utf8'));
    expect(lines.some((l) => l.kind === 'memory')).toBe(true);
    expect(lines.some((l) => l.kind === 'load')).toBe(true);
    expect(lines.some((l) => l.kind === 'event' && l.type === 'interrupted')).toBe(true);
    // Only the first placement ran.
    expect(results.variants.map((p) => p.name)).toEqual(['pre-attestation']);

    await sleep(500);
    const { runId } = expectReaped(out);
    if (host!.cpuBase) expect(existsSync(join(host!.cpuBase, 'attestorm', runId))).toBe(false);
    else skipNote("removal of the run's cpu cgroups", 'no v1 cpu hierarchy');
  });

  it('a second SIGINT at once (a double Ctrl-C, or timeout relaying its own): exits 130 at once, the folder says interrupted, not running', async () => {
    const reports = join(dir, 'reports-twice');
    const out = join(reports, 'twice');
    const { child, exit, samples } = startTinyRun('tiny-twice', out, ['ignore', 'ignore', 'ignore']);
    await untilLoadRuns(samples);
    // The agent stopped (SIGSTOP) holds the orderly stop up for its grace period, as a slow agent
    // does, so the second signal surely comes before the first one's results are written.
    const agent = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(join(out, 'pre-attestation.r1')) && l.includes('agent-entry'))
      .map((l) => Number(l.trim().split(/\s+/)[0]));
    expect(agent).toHaveLength(1);
    process.kill(agent[0]!, 'SIGSTOP');
    child.kill('SIGINT');
    // Apart: back to back, two signals may arrive as one.
    await sleep(500);
    child.kill('SIGINT');
    expect(await exit).toBe(130);
    process.kill(agent[0]!, 'SIGKILL');
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as RunResults;
    expect(results.status).toBe('interrupted');
    expect(results.passed).toBe(false);
    expect(results.verdict).not.toBe('passed');
    expect(parseNdjson(readFileSync(samples, 'utf8')).some((l) => l.kind === 'load')).toBe(true);
    // What the immediate exit left is for cleanup, which leaves the folder's truthful status alone.
    await sleep(5000);
    const cleanup = attestorm('cleanup', '--reports', reports);
    expect(cleanup).not.toContain('marked run folder');
    expect((JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as RunResults).status).toBe('interrupted');
    expectReaped(out);
  });

  it('SIGKILL of the runner: the folder says running with its pid until cleanup marks it incomplete; report renders what was recorded', async () => {
    const reports = join(dir, 'reports');
    const out = join(reports, 'killed');
    const { child, exit, samples } = startTinyRun('tiny-kill', out, ['ignore', 'ignore', 'ignore']);
    await untilLoadRuns(samples);
    const before = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as RunResults;
    expect(before.status).toBe('running');
    expect(before.runner.pid).toBe(child.pid);
    child.kill('SIGKILL');
    await exit;
    // The agent and the pods notice their owner's death (IPC channel closed) and exit by themselves.
    await sleep(5000);

    // report renders what was recorded and says the run is incomplete.
    const rep = attestorm('report', out, '--format', 'md,json');
    expect(rep).toBeDefined();
    const md = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(md).toMatch(/incomplete/);
    expect(md).toContain('pre-attestation');
    const reportJson = readFileSync(join(out, 'report.json'), 'utf8');
    expect(reportJson).toContain('"status": "incomplete"');

    // cleanup removes what the killed runner left and marks the folder.
    const cleanup = attestorm('cleanup', '--reports', reports);
    expect(cleanup).toContain(`marked run folder ${out}: status running → incomplete`);
    const after = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as RunResults;
    expect(after.status).toBe('incomplete');
    expect(after.passed).toBe(false);
    expect(after.statusDetail).toMatch(/died while it said running/);
    const { runTmp } = expectReaped(out);
    expect(existsSync(runTmp)).toBe(false);
  });
});
