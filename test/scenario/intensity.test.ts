// Expectations in the mechanism's terms: the share of admitted calls served, and the storm intensity a
// variant's shape needs — below it the variant is inconclusive with the measured numbers, never failed
// (a slower machine) and never passed (a shape not shown).
import { cpus } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { StormRecord, VariantResult } from '../../src/contract/index.js';
import { applyExpectations, evaluateExpectations } from '../../src/scenario/index.js';
import { variantResult } from '../support/variant-result.js';

const MiB = 2 ** 20;
const storm = (offeredRps: number, over: Partial<StormRecord> = {}): StormRecord => ({
  offeredWorkers: 96,
  startedWorkers: 96,
  offeredRps,
  deliveredRps: offeredRps,
  generatorCpuShare: 0.18,
  machineBusyCores: 2,
  agentCpuCores: 0.4,
  loadAverage: 31,
  ...over,
});
// A storm of 400 calls/s, nearly all of it rejected, the admitted calls 90% served.
function variant(name: string, over: Partial<VariantResult> = {}): VariantResult {
  return variantResult({ name, okRps: 9, rejectedRps: 300, deadlineExceededRps: 1, storm: storm(400), ...over });
}

describe('minAdmittedSuccess', () => {
  it('judges the share of the admitted storm calls (all but rejections) that succeeded, quoting the rates', () => {
    const fast = variant('pre', { okRps: 9, deadlineExceededRps: 1 });
    expect(evaluateExpectations(fast, { minAdmittedSuccess: 0.3 }, [fast])[0]).toMatchObject({
      name: 'minAdmittedSuccess',
      verdict: 'passed',
      actual: 0.9,
      message: '90% of the admitted storm calls succeeded (9.0/s of 10.0/s; deadline exceeded 1.0/s, errors 0.0/s) >= 30%',
    });
    // A slower machine: fewer admitted calls finish in time, the agent still serves them.
    const slow = variant('pre', { okRps: 4.3, deadlineExceededRps: 5.7 });
    expect(evaluateExpectations(slow, { minAdmittedSuccess: 0.3, minOkRps: 7 }, [slow]).map((e) => [e.name, e.verdict])).toEqual([
      ['minOkRps', 'failed'],
      ['minAdmittedSuccess', 'passed'],
    ]);
    const collapsed = variant('disabled', { okRps: 2, deadlineExceededRps: 97, rejectedRps: 0 });
    expect(evaluateExpectations(collapsed, { minAdmittedSuccess: 0.3 }, [collapsed])[0]).toMatchObject({ verdict: 'failed', actual: 0.0202 });
  });

  it('nothing admitted is inconclusive, not a failure', () => {
    const none = variant('pre', { okRps: 0, deadlineExceededRps: 0, errorRps: 0 });
    expect(evaluateExpectations(none, { minAdmittedSuccess: 0.3 }, [none])[0]).toMatchObject({ verdict: 'inconclusive', basis: 'none' });
  });
});

describe('minOfferedRps: the storm intensity a shape needs', () => {
  it('met: a passed precondition first, the rules judged as usual', () => {
    const v = variant('pre', { oomKills: 1, peakMemoryBytes: 128 * MiB });
    const r = evaluateExpectations(v, { minOfferedRps: 50, oomKilled: false }, [v]);
    expect(r.map((e) => [e.name, e.verdict])).toEqual([
      ['minOfferedRps', 'passed'],
      ['oomKilled', 'failed'],
    ]);
    expect(r[0]!.message).toBe('the storm offered 400.0/s >= the 50.0/s this shape needs');
  });

  it('not met: inconclusive with the measured numbers; a failure becomes not judged; a pass cannot pass the variant', () => {
    const weak = variant('pre', { storm: storm(62), oomKills: 0, okRps: 1, deadlineExceededRps: 9 });
    const [variants, verdict] = ((vs) => [vs, applyExpectations(vs, { pre: { minOfferedRps: 150, oomKilled: false, minAdmittedSuccess: 0.3 } })] as const)([
      weak,
    ]);
    const r = variants[0]!.expectations;
    expect(r.map((e) => [e.name, e.verdict])).toEqual([
      ['minOfferedRps', 'inconclusive'],
      ['oomKilled', 'passed'],
      ['minAdmittedSuccess', 'inconclusive'],
    ]);
    expect(r[0]!.message).toBe(
      `storm too weak to judge: the storm offered 62.0/s, this variant's shape needs >= 150.0/s: 96 of 96 workers started, generator CPU 18% of the machine, agent 0.40 cores, machine 2.00 of ${cpus().length} cores busy, load average 31.0`,
    );
    expect(r[2]!.message).toMatch(/^not judged \(storm too weak\): 10% of the admitted storm calls succeeded/);
    expect(variants[0]!.verdict).toBe('inconclusive');
    expect(variants[0]!.passed).toBe(true);
    expect(verdict).toBe('inconclusive');
  });

  it('a storm the generator held back says so in the verdict, with the CPU that shows it', () => {
    const detail = "the generator's processes used 0.97 cores and the runner 0.02 of the 1 CPU left to them, the agent 0.31 of its 1";
    const held = variant('post', { storm: storm(420, { generatorCpuCores: 0.97, runnerCpuCores: 0.02, limitedBy: { by: 'generator', detail } }), oomKills: 0 });
    const r = evaluateExpectations(held, { minOfferedRps: 3000, oomKilled: true }, [held]);
    expect(r.map((e) => [e.name, e.verdict])).toEqual([
      ['minOfferedRps', 'inconclusive'],
      ['oomKilled', 'inconclusive'],
    ]);
    expect(r[0]!.message).toBe(
      `storm limited by the generator: ${detail}; the storm offered 420.0/s, this variant's shape needs >= 3000.0/s: 96 of 96 workers started, generator 0.97 cores (runner 0.02), agent 0.40 cores, machine 2.00 of ${cpus().length} cores busy, load average 31.0`,
    );
    expect(r[1]!.message).toMatch(/^not judged \(storm limited by the generator\): not OOM-killed/);
    // The agent at its limit: still too weak to judge, and who was at the limit is named.
    const busy = variant('post', { storm: storm(420, { limitedBy: { by: 'agent', detail: 'the agent 0.99 of its 1' } }) });
    expect(evaluateExpectations(busy, { minOfferedRps: 3000 }, [busy])[0]!.message).toMatch(
      /^storm too weak to judge: .*\(the agent was at its CPU limit: the agent 0\.99 of its 1\)$/,
    );
  });

  it('a ratio to a variant whose storm was too weak is not judged; without a storm record the precondition is inconclusive', () => {
    const pre = variant('pre', { peakMemoryBytes: 60 * MiB });
    const unbounded = variant('unbounded', { peakMemoryBytes: 70 * MiB, storm: storm(40) });
    applyExpectations([pre, unbounded], { pre: { maxPeakRatio: { to: 'unbounded', value: 0.75 } }, unbounded: { minOfferedRps: 80, minPeakMemory: '100Mi' } });
    expect(pre.expectations[0]).toMatchObject({ name: 'maxPeakRatio', verdict: 'inconclusive' });
    expect(pre.expectations[0]!.message).toMatch(/^not judged \(unbounded's storm too weak\): peak working set 0\.86× unbounded/);
    expect(unbounded.expectations.map((e) => e.verdict)).toEqual(['inconclusive', 'inconclusive']);
    const bare = variant('x');
    delete bare.storm;
    expect(evaluateExpectations(bare, { minOfferedRps: 10 }, [bare])[0]).toMatchObject({
      verdict: 'inconclusive',
      basis: 'none',
      message: "storm too weak to judge: the storm's offered rate was not measured (no generator figures recorded)",
    });
  });
});

describe('minAgentCpuCores', () => {
  const cores = cpus().length;
  // Run 2 of a 1.2-core series beside other storms: enough offered, the agent starved, 3% served.
  const starved = (busy: number) =>
    variant('pre', { okRps: 0.6, deadlineExceededRps: 18.3, storm: storm(400, { agentCpuCores: 0.41, machineBusyCores: busy }) });

  it('on a saturated machine, an agent that got less CPU than its shape needs is inconclusive, its failures not judged', () => {
    const v = starved(cores);
    const r = evaluateExpectations(v, { minAdmittedSuccess: 0.15, minAgentCpuCores: 0.5 }, [v]);
    expect(r.map((e) => [e.name, e.verdict])).toEqual([
      ['minAgentCpuCores', 'inconclusive'],
      ['minAdmittedSuccess', 'inconclusive'],
    ]);
    expect(r[0]!.message).toMatch(
      /^agent starved by its neighbours: the agent got 0\.41 cores, this shape needs >= 0\.5, on a saturated machine \(.*machine \d\.\d\d of \d+ cores busy/,
    );
    expect(r[1]!.message).toMatch(/^not judged \(agent starved\): 3% of the admitted storm calls succeeded/);
  });

  it('with CPU to spare on the machine, a starved agent is its own doing: the rules are judged', () => {
    const v = starved(cores * 0.5);
    const r = evaluateExpectations(v, { minAdmittedSuccess: 0.15, minAgentCpuCores: 0.5 }, [v]);
    expect(r.map((e) => [e.name, e.verdict])).toEqual([
      ['minAgentCpuCores', 'passed'],
      ['minAdmittedSuccess', 'failed'],
    ]);
  });

  it('an agent that got its CPU passes the precondition; an unmeasured one is inconclusive', () => {
    const fed = variant('pre', { storm: storm(400, { agentCpuCores: 0.7 }) });
    expect(evaluateExpectations(fed, { minAgentCpuCores: 0.5 }, [fed])[0]).toMatchObject({ verdict: 'passed', actual: 0.7 });
    const unknown = variant('pre', { storm: storm(400, { agentCpuCores: null }) });
    expect(evaluateExpectations(unknown, { minAgentCpuCores: 0.5 }, [unknown])[0]).toMatchObject({ verdict: 'inconclusive', basis: 'none' });
  });
});

describe('minInflightAttestations: the pile-up a collapsing shape needs', () => {
  it('met by the attestations in flight, or by an OOM kill whatever the last reading saw', () => {
    const piled = variant('post', { peakInflightAttestations: 75, storm: storm(27), peakMemoryBytes: 110 * MiB });
    const r = evaluateExpectations(piled, { minInflightAttestations: 30, minPeakMemory: '100Mi' }, [piled]);
    expect(r.map((e) => [e.name, e.verdict])).toEqual([
      ['minInflightAttestations', 'passed'],
      ['minPeakMemory', 'passed'],
    ]);
    expect(r[0]!.message).toBe('75 attestations in flight at once >= the 30 this shape needs');
    const killed = variant('post', { peakInflightAttestations: 12, oomKills: 1, peakMemoryBytes: 128 * MiB });
    expect(evaluateExpectations(killed, { minInflightAttestations: 30 }, [killed])[0]).toMatchObject({
      verdict: 'passed',
      actual: 12,
      message: 'OOM-killed with 12 attestations in flight at the last reading: the pile-up reached the memory limit',
    });
  });

  it('not met: inconclusive with the numbers, failures not judged, and a ratio to it not judged either', () => {
    const pre = variant('pre', { peakMemoryBytes: 70 * MiB, peakInflightAttestations: 9 });
    const post = variant('post', { peakMemoryBytes: 80 * MiB, peakInflightAttestations: 14, storm: storm(59) });
    const unbounded = variant('unbounded', { peakMemoryBytes: 85 * MiB, peakInflightAttestations: 20 });
    const verdict = applyExpectations([pre, post, unbounded], {
      pre: { maxPeakRatio: { to: 'unbounded', value: 0.75 } },
      post: { minInflightAttestations: 30, minPeakRatio: { to: 'pre', value: 1.3 } },
      unbounded: { minInflightAttestations: 30, minPeakMemory: '100Mi' },
    });
    expect(post.expectations.map((e) => [e.name, e.verdict])).toEqual([
      ['minInflightAttestations', 'inconclusive'],
      ['minPeakRatio', 'inconclusive'],
    ]);
    expect(post.expectations[0]!.message).toMatch(
      /^storm too weak to pile up: at most 14 attestations in flight at once, this variant's shape needs >= 30: the storm offered 59\.0\/s, 96 of 96 workers started/,
    );
    expect(post.expectations[1]!.message).toMatch(/^not judged \(no pile-up\): peak working set 1\.14× pre/);
    expect(pre.expectations[0]!.message).toMatch(/^not judged \(unbounded's storm too weak\)/);
    expect(unbounded.verdict).toBe('inconclusive');
    expect(verdict).toBe('inconclusive');
  });

  it('unmeasured attestations in flight (an agent without those metrics) are inconclusive, not passed', () => {
    const spire = variant('spire', { peakInflightAttestations: null });
    expect(evaluateExpectations(spire, { minInflightAttestations: 30 }, [spire])[0]).toMatchObject({ verdict: 'inconclusive', basis: 'none' });
  });
});

describe('minOpenConnections: the storm reached the agent, for workers that wait for their answers', () => {
  it("met by the agent's own connection gauge, whatever rate the waiting workers offered", () => {
    const spire = variant('spire-off', { storm: storm(132), agentPeaks: { openConnections: 1224, goroutines: 7766 }, peakMemoryBytes: 417 * MiB });
    const r = evaluateExpectations(spire, { minOpenConnections: 600, oomKilled: false }, [spire]);
    expect(r.map((e) => [e.name, e.verdict])).toEqual([
      ['minOpenConnections', 'passed'],
      ['oomKilled', 'passed'],
    ]);
    expect(r[0]!.message).toBe('the agent held 1224 connections at once >= the 600 this shape needs');
  });

  it('not met: inconclusive with the numbers, its failures not judged; unmeasured is inconclusive too', () => {
    const weak = variant('spire-off', { storm: storm(40), agentPeaks: { openConnections: 310, goroutines: null }, oomKills: 1, peakMemoryBytes: 512 * MiB });
    const r = evaluateExpectations(weak, { minOpenConnections: 600, oomKilled: false }, [weak]);
    expect(r.map((e) => [e.name, e.verdict])).toEqual([
      ['minOpenConnections', 'inconclusive'],
      ['oomKilled', 'inconclusive'],
    ]);
    expect(r[0]!.message).toMatch(
      /^storm did not reach the agent at full size: the agent held at most 310 connections at once, this variant's shape needs >= 600: 96 of 96 workers started/,
    );
    expect(r[1]!.message).toMatch(/^not judged \(storm did not reach the agent\)/);
    const unmeasured = variant('x', { agentPeaks: undefined });
    expect(evaluateExpectations(unmeasured, { minOpenConnections: 600 }, [unmeasured])[0]).toMatchObject({ verdict: 'inconclusive', basis: 'none' });
  });
});
