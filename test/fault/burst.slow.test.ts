// A burst fault through the real runner: a real reference agent in a memory cgroup, real storm pods
// (processes in kubelet-named cgroups, listed by the kubelet emulator), and a wave of new storm pods
// that joins at the fault's start and is deleted at its end. The wave must show in the live-worker
// series, in the calls per second, in the agent's answers to the new pod UIDs, and nowhere outside
// its window; its fault record carries the usual recovery figures.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { parseScenario, Progress, stormLoadDriver, type EventSample, type LoadSample, type SampleLine } from '../../src/scenario/index.js';
import { runScenario } from '../../src/runner/index.js';

const { host, reason } = detectCgroupHost();
const out = mkdtempSync(join(tmpdir(), 'attestorm-burst-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const quiet = () => ({ progress: new Progress({ tty: false, stream: { write: () => true } as never }), tableStream: { write: () => true } as never });

const callsOf = (s: LoadSample) => s.ok + s.rateLimited + s.deadlineExceeded + s.error;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

describe.skipIf(!host)(`burst: a wave of extra storm pods for a window (${reason})`, () => {
  it('8 extra workers in 2 new pods call from the fault start to its end, counted as the storm', async () => {
    // Paced workers (5 calls/s each): the offered rate follows the number of workers, not the CPU.
    const loaded = parseScenario(
      {
        name: 'burst-test',
        duration: '18s',
        warmup: '1s',
        variants: [{ name: 'pre', agent: { placement: 'pre-attestation' } }],
        agent: { memoryLimit: '256Mi', attestors: ['k8s'], kubelet: { visibilityDelay: '0s' }, rateLimits: { fetch_jwt_svid: 100 }, startTimeout: '60s' },
        load: { pods: 1, workersPerPod: 4, rate: 5, deadline: '1s', connection: 'per-call', bystanders: { pods: 1, rate: 2 } },
        faults: [{ at: '4s', for: '8s', action: 'burst', workers: 8 }],
      },
      'burst-test',
    );
    const { results } = await runScenario({ loaded, load: stormLoadDriver, outDir: join(out, 'run'), command: 'test', render: false, ...quiet() });
    expect(results.status).toBe('complete');
    const v = results.variants[0]!;
    expect(v.error).toBeUndefined();

    // The fault record: started and ended on schedule, the wave described, recovery measured.
    const f = v.faults![0]!;
    expect(f).toMatchObject({ action: 'burst', atMs: 4000, forMs: 8000 });
    expect(f.error).toBeUndefined();
    expect(f.startedAtMs).not.toBeNull();
    // The window is the schedule's: the wave's start-up does not stretch it.
    expect(f.endedAtMs! - f.startedAtMs!).toBeGreaterThanOrEqual(8000);
    expect(f.endedAtMs! - f.startedAtMs!).toBeLessThan(8000 + 3000);
    const m =
      /^8 extra storm workers in 2 pods started \(([0-9a-f-]{36}), ([0-9a-f-]{36})\); 2 pods of the wave ended \(8 workers\), all calling from (\d+) ms after the start$/.exec(
        f.detail,
      );
    expect(m, f.detail).not.toBeNull();
    const waveUids = new Set([m![1]!, m![2]!]);
    const readyMs = Number(m![3]);
    expect(f.recovery.agentReadyMs).not.toBeNull();
    expect(f.recovery.bystanderOkMs).not.toBeNull();
    expect(f.recovery.callsLost).not.toBeNull();

    // Counted as the storm's: offered and started workers include the wave.
    expect(v.storm).toMatchObject({ offeredWorkers: 12, startedWorkers: 12 });
    expect(v.storm!.shrank).toBeUndefined();

    const lines = readFileSync(join(out, 'run', v.runDirs[0]!, 'samples.ndjson'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as SampleLine);
    const event = (type: EventSample['type']) =>
      lines.find((l): l is EventSample => l.kind === 'event' && l.type === type && (l.detail ?? '').startsWith('faults[0] burst'))!;
    // One prefix naming the fault, then the wave; the start is placed when the action began.
    expect(event('fault-start').detail).toMatch(/^faults\[0\] burst: 8 extra storm workers in 2 pods started \(/);
    expect(event('fault-end').detail).toMatch(/^faults\[0\] burst: 2 pods of the wave ended \(8 workers\), all calling from \d+ ms after the start$/);
    const start = event('fault-start').t;
    const end = event('fault-end').t;
    const seconds = lines.filter((l): l is LoadSample => l.kind === 'load');
    // Whole seconds before the wave, while all of it calls, and once it has gone (the end second
    // holds calls in flight; pods take up to their SIGTERM grace to finish).
    const before = seconds.filter((s) => s.t + 1000 <= start && s.t >= 0);
    const during = seconds.filter((s) => s.t >= start + readyMs && s.t + 1000 <= end);
    const after = seconds.filter((s) => s.t >= end + 3000);
    // The wave's pods fork their workers first (readyMs): an 8 s window leaves whole seconds of it.
    const where = `fault ${start}–${end} ms, wave calling ${readyMs} ms after its start`;
    expect(before.length, where).toBeGreaterThanOrEqual(2);
    expect(during.length, where).toBeGreaterThanOrEqual(2);
    expect(after.length, where).toBeGreaterThanOrEqual(1);

    // The live series: 1 pod × 4 workers, then 3 pods × 12 workers, then back.
    for (const s of before) expect({ t: s.t, pods: s.stormPods, workers: s.stormWorkers }).toEqual({ t: s.t, pods: 1, workers: 4 });
    for (const s of during) expect({ t: s.t, pods: s.stormPods, workers: s.stormWorkers }).toEqual({ t: s.t, pods: 3, workers: 12 });
    for (const s of after) expect({ t: s.t, pods: s.stormPods, workers: s.stormWorkers }).toEqual({ t: s.t, pods: 1, workers: 4 });

    // Calls per second rise with the wave (3× the workers) and fall back after it.
    const rate = { before: mean(before.map(callsOf)), during: mean(during.map(callsOf)), after: mean(after.map(callsOf)) };
    expect(rate.during, JSON.stringify(rate)).toBeGreaterThan(1.8 * rate.before);
    expect(rate.after, JSON.stringify(rate)).toBeLessThan(0.7 * rate.during);

    // The agent answered the new pod UIDs (so the kubelet listed them), only inside the window.
    const waveSeconds = seconds.filter((s) => Object.keys(s.pods ?? {}).some((uid) => waveUids.has(uid)));
    const waveOk = waveSeconds.reduce((n, s) => n + Object.entries(s.pods!).reduce((k, [uid, c]) => k + (waveUids.has(uid) ? c.ok : 0), 0), 0);
    expect(waveOk).toBeGreaterThan(0);
    for (const s of waveSeconds) {
      expect(s.t + 1000, `wave calls in second t=${s.t}, fault ${start}–${end}`).toBeGreaterThan(start);
      expect(s.t, `wave calls in second t=${s.t}, fault ${start}–${end}`).toBeLessThan(end + 3000);
    }
    process.stdout.write(`burst: ${JSON.stringify({ start, end, readyMs, rate, waveOk, storm: v.storm, recovery: f.recovery })}\n`);

    // Nothing left behind: no pod processes of this run, no cgroups.
    const ps = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
    expect(ps.split('\n').filter((l) => l.includes('burst-test'))).toEqual([]);
    const memoryRoot = join(host!.memoryBase, 'attestorm');
    if (existsSync(memoryRoot)) expect(readdirSync(memoryRoot).filter((d) => d.startsWith('burst'))).toEqual([]);
  });
});
