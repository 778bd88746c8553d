// The StormControl runLoad hands out at go time: a burst's wave of extra storm pods, spawned through
// the run's pods so they count as the storm's, and ended with what the wave achieved.
import { RunError } from '../errors.js';
import type { PodHandle } from './pod-handle.js';
import type { PodHost } from './pod-host.js';
import type { LoadRunPods } from './run-load-pods.js';
import { waveSizes, type StormControl, type StormWave, type StormWaveEnd } from './storm-wave.js';

export function stormControl(pods: LoadRunPods, host: PodHost, workersPerPod: number): StormControl {
  return {
    async addWorkers(workers: number): Promise<StormWave> {
      if (!host.addPods || !host.endPods) throw new RunError('load: this pod host cannot add storm pods while the load runs');
      if (!Number.isInteger(workers) || workers < 1) throw new RunError(`load: extra storm workers must be a positive integer, got ${workers}`);
      if (!pods.running) throw new RunError('load: the load phase is not running');
      const asked = Date.now();
      const sizes = waveSizes(workers, workersPerPod);
      const wave: PodHandle[] = [];
      const added = await host.addPods(sizes.length, (pod) => {
        const h = pods.spawn(pod, sizes[wave.length]);
        wave.push(h);
        return h.child;
      });
      // Forking the workers takes a while (seconds on a busy machine): the wave returns at once and
      // its window stays the schedule's; a pod still starting at the end is ended with the others.
      const readyAt = wave.map((h) =>
        h.ready.then(
          () => Date.now(),
          () => null,
        ),
      );
      return {
        pods: added.length,
        workers: sizes.reduce((a, b) => a + b, 0),
        podUids: added.map((p) => p.uid),
        async stop(): Promise<StormWaveEnd> {
          const endedAt = Date.now();
          await host.endPods!(added);
          const called = (await Promise.all(readyAt)).filter((t): t is number => t !== null && t <= endedAt);
          return {
            calling: called.length,
            readyMs: called.length ? Math.max(...called) - asked : null,
            failures: wave.flatMap((h) => (h.failure ? [h.failure.message] : [])),
          };
        },
      };
    },
  };
}
