// results.json's spireHeap: the runner sums a repetition's heap profiles once it has ended, and a
// variant without profiles gets no such field.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VariantTally } from '../../src/runner/run-results.js';
import { newMeasurement, parseScenario, type LoadDriver } from '../../src/scenario/index.js';

const HEAP = join(import.meta.dirname, '..', 'spire', 'fixtures', 'heap');
const runDir = mkdtempSync(join(tmpdir(), 'attestorm-tally-'));
afterAll(() => rmSync(runDir, { recursive: true, force: true }));

// Only the latency summary is asked of the load driver here, and there are no histograms to merge.
const noLatency = { summarize: () => null } as unknown as LoadDriver;

describe('spireHeap in results.json', () => {
  it("is each repetition's largest and last profile, for the variants that saved any", () => {
    const { scenario } = parseScenario({
      name: 't',
      duration: '1s',
      repetitions: 2,
      variants: [
        { name: 'spire-off', agent: { kind: 'spire', heapProfiles: '30s' } },
        { name: 'ref', agent: { kind: 'reference', placement: 'disabled' } },
      ],
      load: { pods: 1, workersPerPod: 1 },
    });
    const tally = new VariantTally(scenario, noLatency, runDir);
    for (const rep of ['spire-off.r1', 'spire-off.r2', 'ref.r1']) mkdirSync(join(runDir, rep));
    copyFileSync(join(HEAP, 'main-off--4999ms.pb.gz'), join(runDir, 'spire-off.r1', 'spire-heap--4999ms.pb.gz'));
    copyFileSync(join(HEAP, 'main-off-145003ms.pb.gz'), join(runDir, 'spire-off.r1', 'spire-heap-145003ms.pb.gz'));
    copyFileSync(join(HEAP, 'main-limited-54998ms.pb.gz'), join(runDir, 'spire-off.r2', 'spire-heap-54998ms.pb.gz'));
    tally.add('spire-off', newMeasurement('spire-off.r1', 512 * 2 ** 20));
    tally.add('spire-off', newMeasurement('spire-off.r2', 512 * 2 ** 20));
    tally.add('ref', newMeasurement('ref.r1', 512 * 2 ** 20));
    const [spire, ref] = tally.summarize();
    expect(spire!.spireHeap!.map((h) => [h.rep, h.profiles, h.largest.file, h.last.file, Math.round(h.largest.totalBytes / 2 ** 10)])).toEqual([
      // pprof: 238.93 MB live; 140.82 MB (KiB from the bytes the profile holds).
      [1, 2, 'spire-heap-145003ms.pb.gz', 'spire-heap-145003ms.pb.gz', 244_666],
      [2, 1, 'spire-heap-54998ms.pb.gz', 'spire-heap-54998ms.pb.gz', 144_196],
    ]);
    expect(ref!.spireHeap).toBeUndefined();
  });
});
