// The working set (usage minus inactive file pages) from v1 and v2 memory.stat fixtures, through
// every reader (the local cgroup, the cluster's node reader), the peaks it gives a repetition, and
// the scenario's choice of measure in peaks and expectations.
import { describe, expect, it } from 'vitest';
import { Cgroup, inactiveFileBytes, parseFlatKeyed, workingSetBytes } from '../../src/cgroup/index.js';
import { NO_PEAKS, PeakTracker, peaksAtOomKill, runMemoryMeasure, upgradeResults, type MemorySample } from '../../src/contract/index.js';
import { ConfigError } from '../../src/errors.js';
import { readCgroupMemory } from '../../src/kube/index.js';
import { aggregateVariant, evaluateExpectations, newMeasurement, parseScenario, type RepMeasurement } from '../../src/scenario/index.js';
import { variantResult } from '../support/variant-result.js';
import { cgroupFixtureBases, v1MemoryFiles, v2MemoryFiles, writeCgroupFiles } from '../support/cgroup-fixture.js';

const MiB = 2 ** 20;

// A v1 agent cgroup with one child: total_* counts both, the plain lines the cgroup alone.
const V1_STAT = `cache 8388608
rss 2097152
inactive_file 4194304
active_file 1048576
total_cache 73400320
total_rss 41943040
total_inactive_file 67108864
total_active_file 6291456
total_unevictable 0
`;
// v2 is hierarchical without a prefix.
const V2_STAT = `anon 41943040
file 73400320
kernel 1048576
inactive_anon 0
active_anon 41943040
inactive_file 67108864
active_file 6291456
unevictable 0
`;

const tmp = cgroupFixtureBases('attestorm-ws-');
const files = writeCgroupFiles;
const v1Files = (usage: number) => v1MemoryFiles(usage, V1_STAT, 256 * MiB);
const v2Files = (usage: number) => v2MemoryFiles(usage, V2_STAT, 256 * MiB);

describe('working set from memory.stat', () => {
  it("takes v1's hierarchical total_inactive_file and v2's inactive_file", () => {
    expect(inactiveFileBytes('v1', parseFlatKeyed(V1_STAT))).toBe(64 * MiB);
    expect(inactiveFileBytes('v2', parseFlatKeyed(V2_STAT))).toBe(64 * MiB);
    // A v1 stat without the hierarchical line gives nothing, not the cgroup-alone figure.
    expect(inactiveFileBytes('v1', parseFlatKeyed('inactive_file 4096\n'))).toBeNull();
  });

  it('is usage minus inactive file, never below 0, null without the figure', () => {
    expect(workingSetBytes(110 * MiB, 64 * MiB)).toBe(46 * MiB);
    // Files read a moment apart: usage can lag memory.stat.
    expect(workingSetBytes(60 * MiB, 64 * MiB)).toBe(0);
    expect(workingSetBytes(60 * MiB, null)).toBeNull();
  });

  it.each([
    ['v1', v1Files],
    ['v2', v2Files],
  ] as const)('Cgroup.readMemory and the node reader agree on a %s fixture', (version, fixture) => {
    const cg = Cgroup.create({ version, memoryBase: tmp(), cpuBase: null }, 'agent');
    files(cg.path, fixture(110 * MiB));
    expect(cg.readMemory()).toMatchObject({ usageBytes: 110 * MiB, workingSetBytes: 46 * MiB, rssBytes: 40 * MiB });
    expect(readCgroupMemory(cg.path, version)).toMatchObject({ usageBytes: 110 * MiB, workingSetBytes: 46 * MiB, rssBytes: 40 * MiB });
  });

  it('an unreadable memory.stat leaves the working set null (usage is still read)', () => {
    const cg = Cgroup.create({ version: 'v2', memoryBase: tmp(), cpuBase: null }, 'agent');
    const { 'memory.stat': _, ...rest } = v2Files(10 * MiB);
    files(cg.path, rest);
    expect(cg.readMemory()).toMatchObject({ usageBytes: 10 * MiB, workingSetBytes: null, rssBytes: null });
  });
});

describe('peaks of a repetition', () => {
  const sample = (usage: number, ws: number | null, peak = usage): MemorySample => ({
    kind: 'memory',
    t: 0,
    usageBytes: usage,
    workingSetBytes: ws,
    rssBytes: ws === null ? null : ws - MiB,
    peakBytes: peak,
    limitBytes: 256 * MiB,
    cpuSeconds: null,
  });

  it('usage from the high-water mark, the working set and RSS from the highest samples', () => {
    const t = new PeakTracker();
    t.add(sample(200 * MiB, 150 * MiB, 255 * MiB));
    t.add(sample(254 * MiB, 140 * MiB));
    t.add(sample(100 * MiB, null));
    expect(t.peaks()).toEqual({ usageBytes: 255 * MiB, workingSetBytes: 150 * MiB, rssBytes: 149 * MiB });
  });

  it("an OOM-killed repetition's working set is at least its usage at the kill", () => {
    expect(peaksAtOomKill({ usageBytes: 256 * MiB, workingSetBytes: 230 * MiB, rssBytes: 200 * MiB })).toEqual({
      usageBytes: 256 * MiB,
      workingSetBytes: 256 * MiB,
      rssBytes: 200 * MiB,
    });
    expect(peaksAtOomKill(NO_PEAKS)).toEqual(NO_PEAKS);
  });
});

describe('the scenario chooses the measure', () => {
  const rep = (over: Partial<RepMeasurement>): RepMeasurement => ({
    ...newMeasurement('post.r1', 256 * MiB),
    peaks: { workingSetBytes: 202 * MiB, usageBytes: 255 * MiB, rssBytes: 190 * MiB },
    loadSeconds: 10,
    counts: { ok: 10, rateLimited: 0, deadlineExceeded: 0, error: 0 },
    ...over,
  });
  const agent = { kind: 'spire', placement: 'post-attestation', key: null } as const;

  it('working set by default, usage or rss when asked; every peak kept', () => {
    expect(parseScenario({ name: 'x' }).scenario.memoryMeasure).toBe('working-set');
    expect(parseScenario({ name: 'x', memoryMeasure: 'usage' }).scenario.memoryMeasure).toBe('usage');
    const ws = aggregateVariant('post', agent, [rep({})], () => null);
    expect(ws).toMatchObject({ memoryMeasure: 'working-set', peakMemoryBytes: 202 * MiB });
    expect(ws.peaks).toEqual({ workingSetBytes: 202 * MiB, usageBytes: 255 * MiB, rssBytes: 190 * MiB });
    expect(aggregateVariant('post', agent, [rep({})], () => null, 'usage').peakMemoryBytes).toBe(255 * MiB);
    expect(aggregateVariant('post', agent, [rep({})], () => null, 'rss').peakMemoryBytes).toBe(190 * MiB);
  });

  it('refuses a measure it does not know, naming the key and the choices', () => {
    let problems: string[] = [];
    try {
      parseScenario({ name: 'x', memoryMeasure: 'cache' });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      problems = (err as ConfigError).problems;
    }
    expect(problems.join('\n')).toMatch(/memoryMeasure.*working-set.*usage.*rss/);
  });

  it('judges maxPeakMemory on the chosen measure and names it', () => {
    const expect250 = { maxPeakMemory: '250Mi' };
    const asWs = variantResult({ memoryLimitBytes: 256 * MiB, ...aggregated('working-set') });
    const [ws] = evaluateExpectations(asWs, expect250, [asWs]);
    expect(ws).toMatchObject({ name: 'maxPeakMemory', verdict: 'passed', actual: 202 * MiB });
    expect(ws!.message).toBe('peak working set 202.0 MiB <= 250.0 MiB');
    const asUsage = variantResult({ memoryLimitBytes: 256 * MiB, ...aggregated('usage') });
    const [usage] = evaluateExpectations(asUsage, expect250, [asUsage]);
    expect(usage).toMatchObject({ verdict: 'failed', actual: 255 * MiB });
    expect(usage!.message).toContain('peak usage 255.0 MiB > 250.0 MiB');
  });

  it('an OOM-killed repetition stays a bound at its usage in the working set too', () => {
    const killed = aggregateVariant(
      'post',
      agent,
      [rep({ oomKills: 1, peaks: { workingSetBytes: 230 * MiB, usageBytes: 256 * MiB, rssBytes: 220 * MiB } })],
      () => null,
    );
    expect(killed.peakMemoryBytes).toBe(256 * MiB);
  });

  function aggregated(measure: 'working-set' | 'usage') {
    const v = aggregateVariant('post', agent, [rep({})], () => null, measure);
    return { peakMemoryBytes: v.peakMemoryBytes, memoryMeasure: v.memoryMeasure, peaks: v.peaks, spread: v.spread };
  }
});

describe('older results', () => {
  it('reads schemaVersion 2 peaks as usage, and a run of them as a usage run', () => {
    const v2 = { schemaVersion: 2, scenario: { name: 'x', resolved: {} }, variants: [{ name: 'disabled', peakMemoryBytes: 300 * MiB, spread: {} }] };
    const r = upgradeResults(v2);
    expect(r.schemaVersion).toBe(3);
    expect(r.variants[0]).toMatchObject({ memoryMeasure: 'usage', peakMemoryBytes: 300 * MiB, peaks: { usageBytes: 300 * MiB, workingSetBytes: null } });
    expect(runMemoryMeasure(r)).toBe('usage');
    // A run without variants yet (its runner died in the first) is a usage run too.
    expect(runMemoryMeasure(upgradeResults({ ...v2, variants: [] }))).toBe('usage');
    expect(runMemoryMeasure({ scenario: { resolved: { memoryMeasure: 'rss' } }, variants: [] })).toBe('rss');
  });
});
