// The burst fault's rules, all decided before any process starts: the schema's (a positive integer
// of workers, a window, no overlapping bursts), the generator's process cap, and the runner
// accepting a burst for a local variant (it used to refuse every burst by name).
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { burstProblems, parseFaults } from '../../src/fault/index.js';
import { LiveStorm, MAX_WORKERS_TOTAL, waveSizes } from '../../src/load/index.js';
import { parseScenario } from '../../src/scenario/index.js';
import { validateFaults } from '../../src/platform/index.js';
import { configProblems } from '../support/config-problems.js';

const problems = (input: unknown): string[] => configProblems(() => parseFaults(input));

const scenario = (faults: unknown[], load: Record<string, unknown> = { pods: 2, workersPerPod: 4 }) =>
  parseScenario({ name: 'b', duration: '10s', placements: ['pre-attestation'], load, faults }).scenario;

describe('burst schema rules', () => {
  it('parses workers and a window', () => {
    expect(parseFaults([{ at: '2s', for: '3s', action: 'burst', workers: 7 }])).toEqual([{ action: 'burst', at: 2000, for: 3000, workers: 7 }]);
  });

  it('workers must be a positive integer', () => {
    for (const workers of [0, -3, 2.5])
      expect(problems([{ at: '1s', for: '1s', action: 'burst', workers }]), String(workers)).toEqual([
        expect.stringMatching(new RegExp(`^faults\\[0\\]\\.workers: .*got ${workers}$`)),
      ]);
    expect(problems([{ at: '1s', for: '1s', action: 'burst', workers: 'ten' }])).toEqual([expect.stringMatching(/^faults\[0\]\.workers: .*got "ten"$/)]);
    expect(problems([{ at: '1s', for: '1s', action: 'burst' }])).toEqual([expect.stringMatching(/^faults\[0\]\.workers: .*got nothing$/)]);
  });

  it('needs `for`, more than 0', () => {
    expect(problems([{ at: '1s', action: 'burst', workers: 3 }])).toEqual([
      'faults[0] (burst) needs `for`, how long the fault lasts (e.g. for: 5s), got nothing',
    ]);
    expect(problems([{ at: '1s', for: '0s', action: 'burst', workers: 3 }])).toEqual(['faults[0].for (burst) must last more than 0, got 0']);
  });

  it('overlapping bursts are an error naming both; back to back is fine', () => {
    expect(
      problems([
        { at: '1s', for: '4s', action: 'burst', workers: 3 },
        { at: '3s', for: '4s', action: 'burst', workers: 5 },
      ]),
    ).toEqual(['faults[1] (burst) overlaps faults[0] (burst): windows of the same action must not overlap, got 3s–7s and 1s–5s']);
    expect(
      parseFaults([
        { at: '1s', for: '2s', action: 'burst', workers: 3 },
        { at: '3s', for: '2s', action: 'burst', workers: 3 },
      ]),
    ).toHaveLength(2);
  });

  it('the storm plus one burst must stay under the process cap', () => {
    const faults = parseFaults([
      { at: '1s', for: '1s', action: 'burst', workers: 2000 },
      { at: '3s', for: '1s', action: 'burst', workers: 10 },
    ]);
    expect(burstProblems(faults, 100, MAX_WORKERS_TOTAL)).toEqual([]);
    expect(burstProblems(faults, 3500, MAX_WORKERS_TOTAL)).toEqual([
      `faults[0] (burst): the storm's 3500 workers plus 2000 extra would be 5500 worker processes; at most ${MAX_WORKERS_TOTAL} may run at once`,
    ]);
  });
});

describe('the runner and bursts', () => {
  it('accepts a burst for a local variant', () => {
    expect(() => validateFaults(scenario([{ at: '2s', for: '3s', action: 'burst', workers: 6 }]))).not.toThrow();
  });

  it('refuses, before anything starts, a burst past the cap or after the load', () => {
    let err: unknown;
    try {
      validateFaults(
        scenario(
          [
            { at: '2s', for: '3s', action: 'burst', workers: 2000 },
            { at: '10s', for: '1s', action: 'burst', workers: 1 },
          ],
          { pods: 4, workersPerPod: 1000 },
        ),
      );
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      'faults[1] (burst): starts at 10s, at or after the end of the load phase (10s); it would never run',
      `faults[0] (burst): the storm's 4000 workers plus 2000 extra would be 6000 worker processes; at most ${MAX_WORKERS_TOTAL} may run at once`,
    ]);
  });
});

describe('wave sizes and the live storm', () => {
  it('cuts a burst into as few pods of the storm size as hold it, evenly', () => {
    expect(waveSizes(50, 20)).toEqual([17, 17, 16]);
    expect(waveSizes(12, 12)).toEqual([12]);
    expect(waveSizes(3, 12)).toEqual([3]);
    expect(waveSizes(25, 12)).toEqual([9, 8, 8]);
  });

  it('reports the most pods and workers calling at once in each second', () => {
    const live = new LiveStorm();
    live.join(0, 12);
    live.join(0, 12);
    live.join(2300, 6); // a wave joins in second 2 ...
    live.leave(4200, 6); // ... and leaves in second 4
    live.leave(3100, 12); // a churned pod leaves (reported late, out of order) ...
    live.join(3600, 12); // ... and its replacement joins
    const at = (k: number) => live.peak(k * 1000, (k + 1) * 1000);
    expect([0, 1, 2, 3, 4, 5].map(at)).toEqual([
      { pods: 2, workers: 24 },
      { pods: 2, workers: 24 },
      { pods: 3, workers: 30 },
      { pods: 3, workers: 30 },
      { pods: 3, workers: 30 },
      { pods: 2, workers: 24 },
    ]);
  });
});
