// The real runner end to end: reference agent in a real memory cgroup, real pods and workers, real
// OOM kills. Asserts the placement ordering the product exists to show, and that nothing is left.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { effectivePeak, parseScenario, Progress, runScenario, stormLoadDriver, type RunResults } from '../../src/scenario/index.js';

const { host, reason } = detectCgroupHost();
const out = mkdtempSync(join(tmpdir(), 'attestorm-e2e-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** PIDs of every process whose command line mentions `needle` (our run's paths). */
function processesMentioning(needle: string): string[] {
  return execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.includes(needle) && !l.includes('ps -eo'));
}

describe.skipIf(!host)(`scenario e2e (${reason})`, () => {
  it('pre-attestation peaks below post-attestation, which peaks at or below disabled; all expectations evaluated; nothing left', async () => {
    const loaded = parseScenario({
      name: 'e2e',
      description: 'short storm through the real runner',
      duration: '15s',
      warmup: '1s',
      // A small storm: slow shared kubelet fetches, fresh connection per call, abandoned retries. At
      // 2 × 10 workers and 15 s the real mechanisms separate the placements too little, so this test
      // turns on the named modeled cost (the runner and the report must carry it through).
      agent: {
        memoryLimit: '128Mi',
        kubelet: { visibilityDelay: '0s', latency: '1500ms' },
        k8s: { pollInterval: '500ms', maxPollAttempts: 6 },
        model: { attestationWorkingSet: '512Ki' },
        restart: { initialBackoff: '5s' },
        startTimeout: '60s',
      },
      load: { pods: 2, workersPerPod: 10, connection: 'per-call', deadline: '200ms', retry: 'immediate' },
      expect: {
        'pre-attestation': { oomKilled: false, maxPeakRatio: { to: 'disabled', value: 1 } },
        'post-attestation': { minPeakRatio: { to: 'pre-attestation', value: 1 } },
        disabled: { minPeakMemory: '1Mi' },
      },
    });
    const lines: string[] = [];
    const outcome = await runScenario({
      loaded,
      load: stormLoadDriver,
      outDir: join(out, 'run'),
      command: 'e2e test',
      render: false,
      progress: new Progress({ tty: false, stream: { write: (s: string) => lines.push(s) } as never }),
      tableStream: { write: (s: string) => lines.push(s) } as never,
    });
    const results = JSON.parse(readFileSync(join(outcome.runDir, 'results.json'), 'utf8')) as RunResults;
    expect(results.status).toBe('complete');
    expect(results.placements.map((p) => p.name)).toEqual(['pre-attestation', 'post-attestation', 'disabled']);
    for (const p of results.placements) {
      expect(p.error, p.name).toBeUndefined();
      expect(p.expectations.length, p.name).toBeGreaterThan(0);
      expect(p.peakMemoryBytes, p.name).toBeGreaterThan(10 * 2 ** 20);
      expect(existsSync(join(outcome.runDir, `${p.name}.r1`, 'samples.ndjson'))).toBe(true);
    }
    const [pre, post, dis] = results.placements.map(effectivePeak) as [number, number, number];
    const limit = results.placements[0]!.memoryLimitBytes;
    expect(pre).toBeLessThan(post);
    // Both at the limit (OOM-killed) counts as equal; otherwise allow 10% for two noisy peaks of the
    // same attestation load (post-attestation attests every call, exactly like disabled).
    if (!(post >= limit && dis >= limit)) expect(post).toBeLessThanOrEqual(dis * 1.1);
    expect(lines.join('')).toContain('| placement');

    // Nothing left behind: no process naming this run's folder or sockets, no cgroup of the run.
    const agentYaml = readFileSync(join(outcome.runDir, 'pre-attestation.r1', 'agent.yaml'), 'utf8');
    const runTmp = /socket: (\/tmp\/attestorm\/[^/]+)\//.exec(agentYaml)![1]!;
    const runId = runTmp.split('/').pop()!;
    expect(processesMentioning(outcome.runDir)).toEqual([]);
    expect(processesMentioning(runTmp)).toEqual([]);
    expect(existsSync(join(host!.memoryBase, 'attestorm', runId))).toBe(false);
    if (host!.cpuBase) expect(existsSync(join(host!.cpuBase, 'attestorm', runId))).toBe(false);
    expect(existsSync(runTmp)).toBe(false);
  });
});
