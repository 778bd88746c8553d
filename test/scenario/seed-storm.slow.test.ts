// The field report's full-size rows (seed-*.yaml) as shipped but for their size: native workers that
// wait for their answers and retry at once. What the rows rest on is checked on the real runner:
// a pre-attestation agent serves what its limiter admits, and without a limiter every worker holds
// one attestation in flight, never more — the storm's demand is bounded by its workers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { buildNativeWorker } from '../../src/load/native/build.js';
import { Progress, readScenarioFile, selectVariants, stormLoadDriver } from '../../src/scenario/index.js';
import { runScenario } from '../../src/runner/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';

const { host, reason } = detectCgroupHost();
// The generator's own rule for whether native workers run (CC, PATH, a compiler that works); the
// build it makes is the one the run then takes from the cache.
const native = await buildNativeWorker();
const why = !host ? reason : !native.ok ? native.reason : 'a memory cgroup and the native worker';
if (!host || !native.ok) skipNote('every test of seed-storm.slow.test.ts', why);
const out = mkdtempSync(join(tmpdir(), 'attestorm-seed-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const PODS = 4;
const WORKERS_PER_POD = 12;

describe.skipIf(!host || !native.ok)(`seed scenarios at a small size (${why})`, () => {
  it('pre-attestation serves what it admits; disabled holds one attestation per worker at most', async () => {
    const loaded = readScenarioFile(join(PROJECT_ROOT, 'scenarios', 'seed-512mi-4x300.yaml'), { duration: '8s' as never }, [
      `load.workersPerPod=${WORKERS_PER_POD}`,
      'warmup=1s',
    ]);
    const { scenario, dropped } = selectVariants(loaded.scenario, ['pre-attestation', 'disabled']);
    const sink = { write: () => true } as never;
    const outcome = await runScenario({
      loaded: { ...loaded, scenario },
      load: stormLoadDriver,
      outDir: join(out, 'run'),
      command: 'seed storm test',
      render: false,
      droppedExpectations: dropped,
      progress: new Progress({ tty: false, stream: sink }),
      tableStream: sink,
    });
    const byName = (n: string) => outcome.results.variants.find((v) => v.name === n)!;
    const pre = byName('pre-attestation');
    const dis = byName('disabled');
    for (const v of [pre, dis]) {
      expect(v.error, v.name).toBeUndefined();
      expect(v.oomKills, v.name).toBe(0);
      expect(v.storm?.startedWorkers, v.name).toBe(PODS * WORKERS_PER_POD);
      expect(v.deadlineExceededRps, v.name).toBe(0);
    }
    // The limiter's bucket admits 10 calls a second per pod, and those are served: a rejection comes
    // back at once, an admitted call waits for the kubelet's 1.5 s, well within the 10 s deadline.
    expect(pre.rejectedRps).toBeGreaterThan(pre.okRps);
    expect(pre.okRps).toBeGreaterThan(0);
    expect(pre.okRps).toBeLessThanOrEqual(PODS * 10 * 1.5);
    const admitted = pre.expectations.find((e) => e.name === 'minAdmittedSuccess');
    expect(admitted, JSON.stringify(pre.expectations)).toMatchObject({ verdict: 'passed' });
    // No limiter: every worker waits in an attestation, and none is left running for a caller that
    // gave up, so the agent never holds more attestations than there are workers.
    expect(dis.peakInflightAttestations).toBeGreaterThanOrEqual(PODS * WORKERS_PER_POD * 0.75);
    expect(dis.peakInflightAttestations).toBeLessThanOrEqual(PODS * WORKERS_PER_POD);
    expect(dis.rejectedRps).toBe(0);
    expect(dis.okRps).toBeGreaterThan(0);
  });
});
