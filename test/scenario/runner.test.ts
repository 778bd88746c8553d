// The runner and one variant's run through the LoadDriver seam: the real runner, targets, samplers,
// sandbox and cgroups, with a scripted load (real gRPC calls from this process) instead of a storm.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectCgroupHost, removeIfEmpty, removeTree } from '../../src/cgroup/index.js';
import { parseNdjson } from '../../src/sample/index.js';
import { newRunId, runTempDir } from '../../src/sandbox/index.js';
import { parseScenario, Progress, type LoadDriver } from '../../src/scenario/index.js';
import { runScenario } from '../../src/runner/index.js';
import type { RunResults } from '../../src/contract/index.js';
import { localPlatform, runLocalRepetition, RunEndingFailure, type Platform } from '../../src/platform/index.js';
import { prepareTargets } from '../../src/targets/index.js';
import { pidsWithArg, scriptedLoad } from './support/scripted-load.js';

const out = mkdtempSync(join(tmpdir(), 'attestorm-runner-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const { host, reason } = detectCgroupHost();
if (!host) console.warn(`runner tests: agents run without a memory cgroup (${reason}); OOMs are emulated`);

/** Runner options that print nothing; the comparison table is kept in `table`. */
function quiet() {
  const table: string[] = [];
  return {
    table,
    progress: new Progress({ tty: false, stream: { write: () => true } as never }),
    tableStream: { write: (c: string) => table.push(c) } as never,
    render: false,
    command: 'test',
  };
}
const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/** A small scenario: the reference agent with the unix attestor, one pod, the given variants and expectations. */
function scenario(name: string, extra: Record<string, unknown> = {}) {
  return parseScenario({
    name,
    duration: '2s',
    warmup: '0s',
    agent: { memoryLimit: '256Mi', attestors: ['unix'], rateLimits: { fetch_jwt_svid: 2 }, startTimeout: '60s', restart: { initialBackoff: '200ms' } },
    load: { pods: 1, workersPerPod: 1 },
    variants: [{ name: 'pre', agent: { placement: 'pre-attestation', key: 'os-uid' } }],
    ...extra,
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the supervisor has started a new agent with this config file (not `pid`). */
async function waitRestart(configFile: string, pid: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (pidsWithArg(configFile).some((p) => p !== pid)) return;
    await sleep(50);
  }
  throw new Error(`the agent of ${configFile} was not restarted within 30 s`);
}

/** Signals the agent started with this config file and waits until the supervisor has started a new one. */
async function killAgentAndWaitRestart(configFile: string, signal: NodeJS.Signals): Promise<void> {
  const [pid] = pidsWithArg(configFile);
  expect(pid, `an agent process started with ${configFile}`).toBeDefined();
  process.kill(pid!, signal);
  await waitRestart(configFile, pid!);
}

async function run(name: string, load: LoadDriver, extra: Record<string, unknown> = {}) {
  const q = quiet();
  const outcome = await runScenario({ loaded: scenario(name, extra), load, outDir: join(out, name), ...q });
  return { ...outcome, table: q.table.join('') };
}
const agentConfig = (name: string, variant: string, rep = 1) => join(out, name, `${variant}.r${rep}`, 'agent.yaml');

describe('rejection totals', () => {
  it('count the rejections made after the last metrics scrape before the agent died', async () => {
    const load = scriptedLoad(async ({ burst }) => {
      const config = agentConfig('rej-death', 'pre');
      const [pid] = pidsWithArg(config);
      // The agent dies the moment the 10th rejection arrives: metrics are scraped once a second, so
      // rejections answered in the same instant cannot all have been scraped.
      let rejected = 0;
      await burst(30, (o) => {
        if (o === 'rateLimited' && ++rejected === 10) process.kill(pid!, 'SIGKILL');
      });
      await waitRestart(config, pid!);
    });
    const { results } = await run('rej-death', load);
    const v = results.variants[0]!;
    const counted = load.runs[0]!.counts;
    expect(v.error).toBeUndefined();
    expect(counted.rateLimited).toBeGreaterThanOrEqual(10);
    expect(v.deaths.length).toBeGreaterThanOrEqual(1);
    // Every rejection the calls saw is in the totals; what no scrape saw has no key type.
    expect(sum(v.rejectionsByKeyType)).toBe(counted.rateLimited);
  });
});

describe('completeRejections', () => {
  it('adds what the generator counted beyond the scrapes as unattributed, never removes scraped counts', async () => {
    const { completeRejections, RejectionTotals, UNATTRIBUTED } = await import('../../src/scenario/index.js');
    const t = new RejectionTotals();
    t.observe({ rejectedByKeyType: { os_uid: 5 } });
    t.observe({ rejectedByKeyType: { os_uid: 9 } });
    // A restarted agent starts from 0: the first lifetime's 9 are banked.
    t.observe({ rejectedByKeyType: { os_uid: 2 } });
    expect(t.scraped()).toEqual({ os_uid: 11 });
    expect(completeRejections(t.scraped(), 15)).toEqual({ os_uid: 11, [UNATTRIBUTED]: 4 });
    expect(completeRejections({ os_uid: 11 }, 7)).toEqual({ os_uid: 11 });
    expect(completeRejections({}, 0)).toEqual({});
  });
});

describe('the runner through the LoadDriver seam', () => {
  it('complete() adds to the finished results before their one last write; the reports render once, with its sections', async () => {
    const load = scriptedLoad(async ({ burst }) => void (await burst(2)));
    const q = quiet();
    const seen: string[] = [];
    const outcome = await runScenario({
      loaded: scenario('complete'),
      load,
      outDir: join(out, 'complete'),
      ...q,
      render: true,
      complete: (r) => {
        seen.push(r.status);
        r.baseline = { from: 'elsewhere', figures: [] };
        return [{ title: 'Added at the end', html: '<p data-testid="added">added</p>', markdown: ['added at the end'] }];
      },
    });
    // Called once, with the status and verdict already decided.
    expect(seen).toEqual(['complete']);
    const written = JSON.parse(readFileSync(join(outcome.runDir, 'results.json'), 'utf8')) as { baseline?: unknown; status: string };
    expect(written).toMatchObject({ status: 'complete', baseline: { from: 'elsewhere', figures: [] } });
    expect(readFileSync(join(outcome.runDir, 'report.html'), 'utf8')).toContain('data-testid="added"');
    expect(readFileSync(join(outcome.runDir, 'summary.md'), 'utf8')).toContain('added at the end');
  });

  it('gives every variant its own agent settings over the shared ones, and the same load to each repetition', async () => {
    const load = scriptedLoad(async ({ burst }) => void (await burst(3)));
    const { results, exitCode, runDir } = await run('settings', load, {
      repetitions: 2,
      variants: [
        { name: 'pre', agent: { placement: 'pre-attestation', key: 'os-uid' } },
        { name: 'off', agent: { placement: 'disabled', memoryLimit: '300Mi' } },
      ],
    });
    expect(results.status).toBe('complete');
    expect(exitCode).toBe(0);
    // Repetition-major order: every variant once, then again.
    expect(load.runs.map((r) => r.socket.split('/').pop())).toEqual(['pre.r1.sock', 'off.r1.sock', 'pre.r2.sock', 'off.r2.sock']);
    for (const r of load.runs) expect(r.scenario.load).toEqual(load.runs[0]!.scenario.load);
    const pre = readFileSync(join(runDir, 'pre.r1', 'agent.yaml'), 'utf8');
    const off = readFileSync(join(runDir, 'off.r2', 'agent.yaml'), 'utf8');
    expect(pre).toMatch(/placement: pre-attestation/);
    expect(off).toMatch(/placement: disabled/);
    expect(results.variants.map((v) => [v.name, v.runDirs, v.memoryLimitBytes])).toEqual([
      ['pre', ['pre.r1', 'pre.r2'], 256 * 2 ** 20],
      ['off', ['off.r1', 'off.r2'], 300 * 2 ** 20],
    ]);
    // The scripted calls are what the results count: 3 per repetition over the 2 s duration.
    const offRuns = load.runs.filter((r) => r.socket.endsWith('off.r1.sock') || r.socket.endsWith('off.r2.sock'));
    const offResult = results.variants.find((v) => v.name === 'off')!;
    expect(offRuns.map((r) => r.counts.ok + r.counts.error + r.counts.rateLimited + r.counts.deadlineExceeded)).toEqual([3, 3]);
    expect(offResult.okRps + offResult.errorRps + offResult.rejectedRps + offResult.deadlineExceededRps).toBe(1.5);
  });

  it('records the /pods answer each variant met in results.json: its pods and byte size, as the scenario shaped it', async () => {
    const load = scriptedLoad(async ({ burst }) => void (await burst(1)));
    const { results } = await run('pod-list', load, {
      variants: [
        { name: 'node', agent: { placement: 'disabled' } },
        { name: 'small', agent: { placement: 'disabled', kubelet: { podList: { pods: 10 } } } },
        { name: 'busy', agent: { placement: 'disabled', kubelet: { podList: { pods: 60, containersPerPod: 3, terminatedPods: 20 } } } },
      ],
    });
    const byName = Object.fromEntries(results.variants.map((v) => [v.name, v.podList]));
    // The node's other pods make room for the run's one pod (which a scripted load never starts):
    // unshaped, 109 of them, about 1 MiB, as it always was.
    expect(byName.node).toMatchObject({ items: 109, runningPods: 109, terminatedPods: 0, containersPerPod: null });
    expect(byName.small).toMatchObject({ items: 9, runningPods: 9, terminatedPods: 0, containersPerPod: null });
    expect(byName.busy).toMatchObject({ items: 79, runningPods: 59, terminatedPods: 20, containersPerPod: 3 });
    expect(byName.node!.bytes).toBeGreaterThan(0.9 * 2 ** 20);
    expect(byName.small!.bytes).toBeLessThan(byName.node!.bytes / 5);
    expect(byName.busy!.bytes).toBeGreaterThan(byName.node!.bytes);
    for (const l of Object.values(byName)) expect(l!.maxBytes).toBeGreaterThanOrEqual(l!.bytes);
  });

  it('an agent killed during the load is restarted, its death is in the load phase, maxRestarts fails with the count', async () => {
    const load = scriptedLoad(async ({ burst }) => {
      await burst(2);
      await killAgentAndWaitRestart(agentConfig('restart', 'pre'), 'SIGTERM');
    });
    const { results, exitCode, table } = await run('restart', load, { expect: { pre: { maxRestarts: 0, oomKilled: false } } });
    const v = results.variants[0]!;
    expect(v.restarts).toBe(1);
    expect(v.deaths).toHaveLength(1);
    // counted means "counts for oomKills" (the contract): an exit does not, in the load phase or not.
    expect(v.deaths[0]).toMatchObject({ phase: 'load', counted: false, cause: 'exit' });
    expect(v.oomKills).toBe(0);
    expect(v.expectations.map((e) => [e.name, e.verdict, e.message])).toEqual([
      ['oomKilled', 'passed', 'not OOM-killed, expected none'],
      ['maxRestarts', 'failed', '1 restart(s) > 0'],
    ]);
    expect(results.verdict).toBe('failed');
    expect(results.passed).toBe(false);
    expect(exitCode).toBe(1);
    expect(table).toContain('restart: complete, verdict failed');
    expect(table).toContain('  pre: maxRestarts failed: 1 restart(s) > 0');
  });

  it('a variant whose agent cannot start is failed with the reason, the load never starts, the run exits 3', async () => {
    const load = scriptedLoad(async () => {
      throw new Error('the load must not start');
    });
    const { results, exitCode, table } = await run('no-agent', load, {
      variants: [{ name: 'ext', agent: { kind: 'external', socket: join(out, 'nobody-listens.sock'), pid: process.pid } }],
      expect: { ext: { oomKilled: false } },
    });
    expect(load.runs).toHaveLength(0);
    const v = results.variants[0]!;
    expect(v.error).toBe(`variant ext: agent.socket ${join(out, 'nobody-listens.sock')} does not exist`);
    expect(v.expectations).toEqual([expect.objectContaining({ name: 'run', verdict: 'failed', message: `the variant could not be run: ${v.error}` })]);
    expect(results.status).toBe('failed');
    expect(results.verdict).toBe('failed');
    expect(exitCode).toBe(3);
    expect(table).toContain('no-agent: failed, verdict failed');
  });

  it('a repetition whose failure ends the run (a node gone): failed with the reason, what ran before kept, nothing after started, exit 3', async () => {
    const load = scriptedLoad(async ({ burst }) => void (await burst(2)));
    const lost = "the agent's node n1 is lost: its container n1 no longer exists in the engine";
    // This machine's platform, whose second variant ends the run as a cluster's does when its node goes.
    const ending: Platform = {
      ...localPlatform,
      prepare: async (s) => {
        const prepared = await localPlatform.prepare(s);
        return {
          ...prepared,
          open: (runId) => {
            const opened = prepared.open(runId);
            return {
              ...opened,
              runRepetition: async (ctx) => {
                const m = await opened.runRepetition(ctx);
                if (ctx.variant.name !== 'off') return m;
                m.error = lost;
                throw new RunEndingFailure(m, new Error(lost));
              },
            };
          },
        };
      },
    };
    const q = quiet();
    const loaded = scenario('ending', {
      variants: [
        { name: 'pre', agent: { placement: 'pre-attestation', key: 'os-uid' } },
        { name: 'off', agent: { placement: 'disabled' } },
        { name: 'post', agent: { placement: 'post-attestation', key: 'selector-set' } },
      ],
    });
    const { exitCode, runDir } = await runScenario({ loaded, load, outDir: join(out, 'ending'), platform: ending, ...q });
    expect(load.runs.map((r) => r.socket.split('/').pop())).toEqual(['pre.r1.sock', 'off.r1.sock']);
    const written = JSON.parse(readFileSync(join(runDir, 'results.json'), 'utf8')) as RunResults;
    expect(written.status).toBe('failed');
    expect(written.statusDetail).toBe(`the run ended in variant off: ${lost} (2 of 3 variant(s) had data; their samples are in the run folder)`);
    expect(written.verdict).not.toBe('passed');
    expect(written.variants.map((v) => [v.name, v.error ?? null])).toEqual([
      ['pre', null],
      ['off', lost],
    ]);
    expect(existsSync(join(runDir, 'off.r1', 'samples.ndjson'))).toBe(true);
    expect(exitCode).toBe(3);
    expect(q.table.join('')).toContain('ending: failed, verdict');
  });

  it('expectations are judged on the counted calls and say so: minOkRps fails with both rates, the verdict line says failed', async () => {
    const load = scriptedLoad(async ({ burst }) => void (await burst(4)));
    const { results, table, exitCode } = await run('verdict', load, {
      variants: [{ name: 'off', agent: { placement: 'disabled' } }],
      expect: { off: { minOkRps: 1000, maxErrorRps: 1000 } },
    });
    const v = results.variants[0]!;
    const counted = load.runs[0]!.counts;
    expect(v.okRps).toBe(counted.ok / 2);
    expect(v.expectations.map((e) => [e.name, e.verdict, e.message])).toEqual([
      ['minOkRps', 'failed', `ok calls ${(counted.ok / 2).toFixed(1)}/s < 1000.0/s`],
      ['maxErrorRps', 'passed', `failed calls (errors + deadline exceeded) ${((counted.error + counted.deadlineExceeded) / 2).toFixed(1)}/s <= 1000.0/s`],
    ]);
    expect(exitCode).toBe(1);
    expect(table).toContain(`  off: minOkRps failed: ok calls ${(counted.ok / 2).toFixed(1)}/s < 1000.0/s`);
  });

  it('a run that judged no rule is compared, never passed: exit 0, or 4 when requireExpectations asks; no ✅ and no "expectations met"', async () => {
    const load = scriptedLoad(async ({ burst }) => void (await burst(2)));
    // Every rule is about a variant this run does not have: dropped before the run, as --variants drops them.
    const outcome = await runScenario({
      loaded: scenario('compared', { variants: [{ name: 'off', agent: { placement: 'disabled' } }] }),
      load,
      outDir: join(out, 'compared'),
      ...quiet(),
      render: true,
      droppedExpectations: ['pre.oomKilled (variant not run)', 'pre.minBystanderSuccess (variant not run)'],
    });
    expect(outcome.results).toMatchObject({ status: 'complete', verdict: 'compared', passed: false });
    expect(outcome.results.judgement).toEqual({
      judged: 0,
      passed: 0,
      failed: 0,
      undecided: 0,
      dropped: ['pre.oomKilled (variant not run)', 'pre.minBystanderSuccess (variant not run)'],
    });
    expect(outcome.exitCode).toBe(0);
    const summary = readFileSync(join(outcome.runDir, 'summary.md'), 'utf8');
    expect(summary).not.toContain('✅');
    expect(summary).not.toMatch(/expectations met/i);
    expect(summary).toContain('Compared, not judged: No expectation was judged; 2 not judged: pre: oomKilled, minBystanderSuccess (variant not run).');
    expect(readFileSync(join(outcome.runDir, 'report.html'), 'utf8')).toContain('class="verdict compared"');

    const required = await run(
      'compared-required',
      scriptedLoad(async ({ burst }) => void (await burst(2))),
      {
        variants: [{ name: 'off', agent: { placement: 'disabled' } }],
        requireExpectations: true,
      },
    );
    expect(required.results.verdict).toBe('compared');
    expect(required.exitCode).toBe(4);
    expect(required.table).toContain('verdict compared:');
    expect(required.table).toContain('No expectation was judged.');
  });

  it('an interrupted repetition stops its load, stops the agent, records the interruption and leaves no cgroup', async () => {
    const loaded = scenario('interrupt', { duration: '60s' });
    const targets = await prepareTargets(loaded.scenario.variants.map((v) => v.agent));
    const runId = newRunId('interrupt');
    const runDir = join(out, 'interrupt');
    const abort = new AbortController();
    let sawAbort = false;
    const load = scriptedLoad(async ({ burst, opts }) => {
      await burst(2);
      abort.abort();
      sawAbort = opts.signal.aborted;
    });
    try {
      const m = await runLocalRepetition({
        scenario: loaded.scenario,
        variant: loaded.scenario.variants[0]!,
        runDir,
        runId,
        rep: 1,
        host,
        targets,
        load,
        signal: abort.signal,
      });
      expect(sawAbort).toBe(true);
      expect(m.error).toBeUndefined();
      // The load phase lasted as long as it really ran, not the scenario's 60 s.
      expect(m.loadSeconds).toBeGreaterThan(0);
      expect(m.loadSeconds).toBeLessThan(60);
      const events = parseNdjson(readFileSync(join(runDir, 'pre.r1', 'samples.ndjson'), 'utf8')).filter((l) => l.kind === 'event');
      expect(events.map((e) => (e as { type: string }).type)).toContain('interrupted');
      expect(pidsWithArg(join(runDir, 'pre.r1', 'agent.yaml'))).toEqual([]);
      if (host) expect(existsSync(join(host.memoryBase, 'attestorm', runId, 'agent-pre-r1'))).toBe(false);
    } finally {
      // runLocalRepetition alone leaves the run's temp dir to its caller (runScenario removes it).
      rmSync(runTempDir(runId), { recursive: true, force: true });
      for (const base of [host?.memoryBase, host?.cpuBase, host?.freezerBase]) {
        if (!base) continue;
        await removeTree(join(base, 'attestorm', runId));
        removeIfEmpty(join(base, 'attestorm'));
      }
    }
  });
});
