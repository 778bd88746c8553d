// One meaning of a death record's `counted` for every platform: it counts for oomKills.
import { describe, expect, it } from 'vitest';
import { countsAsOomKill, deathRecord, oomKillsOf } from '../../src/scenario/index.js';

describe('death records', () => {
  it('an OOM kill counts in the load phase, and outside it unless the scenario ignores those', () => {
    expect(countsAsOomKill('oom-kill', 'load', 'ignore')).toBe(true);
    expect(countsAsOomKill('emulated-oom', 'load', 'ignore')).toBe(true);
    expect(countsAsOomKill('oom-kill', 'warmup', 'count')).toBe(true);
    expect(countsAsOomKill('oom-kill', 'starting-pods', 'ignore')).toBe(false);
  });

  it("a fault's kill, a signal or an exit never counts, whatever the phase", () => {
    for (const cause of ['fault-kill', 'signal', 'exit'] as const) {
      expect(countsAsOomKill(cause, 'load', 'count'), cause).toBe(false);
    }
  });

  it('oomKills is the number of counted deaths', () => {
    const deaths = [
      deathRecord({ rep: 1, atMs: 100, phase: 'load', cause: 'oom-kill', detail: 'OOMKilled' }, 'count'),
      deathRecord({ rep: 1, atMs: 900, phase: 'load', cause: 'fault-kill', detail: 'agent-kill' }, 'count'),
      deathRecord({ rep: 1, atMs: 9000, phase: 'drain', cause: 'oom-kill', detail: 'OOMKilled' }, 'ignore'),
    ];
    expect(deaths.map((d) => d.counted)).toEqual([true, false, false]);
    expect(oomKillsOf(deaths)).toBe(1);
  });
});
