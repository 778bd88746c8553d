import { describe, expect, it } from 'vitest';
import { mergeEncodedHistograms, summarizeHistogram } from '../../src/load/index.js';
import { decodeHistogram, encodeHistogram, newHistogram } from '../../src/load/histograms.js';
import { LoadAggregator } from '../../src/load/aggregator.js';
import { IntervalMerger } from '../../src/load/worker/interval.js';
import { Pacer, latencyUs } from '../../src/load/worker/policy.js';
import { SecondRecorder } from '../../src/load/worker/recorder.js';
import { LatencyHistogram, countsIndex } from '../../src/load/worker/latency-histogram.js';

function encoded(values: number[]): string {
  const h = newHistogram();
  for (const v of values) h.recordValue(v);
  const e = encodeHistogram(h);
  h.destroy();
  return e;
}

describe('encoded histograms', () => {
  it('round-trips counts and values through encode/decode', () => {
    const h = decodeHistogram(encoded([100, 200, 300, 5_000_000]));
    expect(h.totalCount).toBe(4);
    expect(h.maxValue).toBeGreaterThanOrEqual(4_990_000);
    h.destroy();
  });

  it('merges histograms of different ranges into exact totals and percentiles', () => {
    // The second histogram reaches far beyond the first's range: merging must resize, not throw.
    const small = encoded(Array.from({ length: 90 }, () => 1000));
    const large = encoded(Array.from({ length: 10 }, () => 30_000_000));
    const s = summarizeHistogram(mergeEncodedHistograms([small, '', large]));
    expect(s.count).toBe(100);
    expect(s.p50Ms).toBeCloseTo(1, 1);
    expect(s.p90Ms).toBeCloseTo(1, 1);
    expect(s.p99Ms).toBeGreaterThan(29_900);
    expect(s.maxMs).toBeGreaterThan(29_900);
  });

  it('merging the same data in a different grouping gives the same summary', () => {
    const values = Array.from({ length: 1000 }, (_, i) => 50 + ((i * 7919) % 100_000));
    const whole = summarizeHistogram(encoded(values));
    const parts = [0, 1, 2, 3].map((k) => encoded(values.filter((_, i) => i % 4 === k)));
    const pairwise = mergeEncodedHistograms([mergeEncodedHistograms(parts.slice(0, 2)), mergeEncodedHistograms(parts.slice(2))]);
    expect(summarizeHistogram(pairwise)).toEqual(whole);
  });
});

describe('per-second merging across hops', () => {
  it('worker seconds → pod merger → aggregator keep every call and code', () => {
    const rec = new SecondRecorder();
    const shipped = [rec.record(0, 'ok', 0, 500), rec.record(0, 'rateLimited', 14, 40), rec.record(1, 'error', 3, 70), rec.record(1, 'ok', 0, 900)];
    expect(shipped.slice(0, 2)).toEqual([null, null]);
    const second0 = shipped[2]!;
    expect(second0.second).toBe(0);
    expect(second0.counts).toEqual({ ok: 1, rateLimited: 1, deadlineExceeded: 0, error: 0 });
    expect(second0.byCode).toEqual({ OK: 1, UNAVAILABLE: 1 });
    const second1 = rec.take()!;
    expect(second1.byCode).toEqual({ INVALID_ARGUMENT: 1, OK: 1 });
    expect(rec.take()).toBeNull();

    const pod = new IntervalMerger(1);
    pod.add(second1);
    pod.add(second1);
    const merged = pod.toData();
    expect(merged.counts).toEqual({ ok: 2, rateLimited: 0, deadlineExceeded: 0, error: 2 });
    expect(summarizeHistogram(merged.histograms.ok!).count).toBe(2);

    const agg = new LoadAggregator();
    const podA = { uid: 'a', name: 'pod-a' };
    agg.add(podA, second0);
    agg.add({ uid: 'b', name: 'pod-b' }, merged);
    const samples = agg.emitUpTo(1);
    expect(samples.map((s) => [s.t, s.ok, s.rateLimited, s.error])).toEqual([
      [0, 1, 1, 0],
      [1000, 2, 0, 2],
    ]);
    expect(samples[0]!.pods).toEqual({ a: { ok: 1, rateLimited: 1, error: 0 } });
    // A straggler for an emitted second is counted in the next open one, so totals stay whole.
    agg.add(podA, { ...second0, second: 0 });
    const rest = agg.emitAll();
    expect(rest).toHaveLength(1);
    expect(rest[0]!.t).toBe(2000);
    expect(agg.lateCalls).toBe(2);
    // Second 0's data arrived when seconds 0 and 1 had gone out: it moved by two seconds.
    expect(agg.maxLateSeconds).toBe(2);
    const seriesCalls = agg.series.reduce((n, s) => n + s.ok + s.rateLimited + s.deadlineExceeded + s.error, 0);
    expect(seriesCalls).toBe(agg.calls());
    expect(agg.pods).toEqual({ a: { name: 'pod-a', ok: 2, rateLimited: 2, error: 0 }, b: { name: 'pod-b', ok: 2, rateLimited: 0, error: 2 } });
    expect(summarizeHistogram(agg.encodedWholeRun().ok!).count).toBe(agg.totals.ok);
    expect(agg.totals.ok).toBe(4);
    agg.destroy();
  });

  it('emits empty seconds so the series has no holes', () => {
    const agg = new LoadAggregator();
    agg.add(
      { uid: 'a', name: 'a' },
      { second: 2, counts: { ok: 1, rateLimited: 0, deadlineExceeded: 0, error: 0 }, byCode: { OK: 1 }, histograms: { ok: encoded([10]) } },
    );
    expect(agg.emitAll().map((s) => [s.t, s.ok])).toEqual([
      [0, 0],
      [1000, 0],
      [2000, 1],
    ]);
  });
});

describe('coordinated-omission correction', () => {
  it('charges a stall to every call scheduled behind it, not only to the slow one', () => {
    // 10 calls/s (every 100 ms). The first answer takes 1 s; the rest take 1 ms each.
    const pacer = new Pacer(10, 0);
    let now = 0;
    const latencies: number[] = [];
    for (let i = 0; i < 11; i++) {
      const intended = pacer.next(now);
      const sendAt = Math.max(now, intended);
      now = sendAt + (i === 0 ? 1000 : 1);
      latencies.push(latencyUs(intended, now) / 1000);
    }
    // Calls 1..9 were due during the stall: each waited for it, as an open-loop client would see.
    expect(latencies[0]).toBe(1000);
    expect(latencies[1]).toBe(901);
    expect(latencies[5]).toBeCloseTo(505, 0);
    expect(latencies[10]).toBeLessThan(latencies[9]!);
    // Uncorrected (from the actual send) they would all be 1 ms: the omission the correction adds back.
    expect(latencies.slice(1).filter((l) => l > 100).length).toBe(9);
  });

  it('closed loop: intended time is the send time', () => {
    const pacer = new Pacer(null, 0);
    expect(pacer.openLoop).toBe(false);
    expect(pacer.next(1234)).toBe(1234);
  });

  it('a deliberate backoff drops the slots it covers instead of charging them', () => {
    const pacer = new Pacer(10, 0);
    pacer.next(0);
    pacer.skipUntil(450);
    expect(pacer.next(450)).toBe(500);
  });
});

describe("the workers' record-only histogram", () => {
  function both(values: number[]): { lean: string; reference: string } {
    const lean = new LatencyHistogram();
    const ref = newHistogram();
    for (const v of values) {
      lean.recordValue(v);
      ref.recordValue(v);
    }
    const out = { lean: lean.encodeIntoCompressedBase64(), reference: encodeHistogram(ref) };
    ref.destroy();
    return out;
  }

  it('uses the counts-array indices of hdr-histogram-js', () => {
    const ref = newHistogram() as unknown as { countsArrayIndex(v: number): number; destroy(): void };
    for (const v of [
      1,
      2,
      1023,
      1024,
      2047,
      2048,
      2049,
      4095,
      4096,
      123_456,
      2 ** 31 - 1,
      2 ** 31,
      2 ** 32 - 1,
      2 ** 32,
      2 ** 32 + 12_345,
      3.6e9,
      2 ** 40 + 7,
    ]) {
      expect(countsIndex(v), String(v)).toBe(ref.countsArrayIndex(v));
    }
    ref.destroy();
  });

  it('encodes what hdr-histogram-js decodes into the same counts as its own encoding', () => {
    let seed = 42;
    const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const sets = [
      [500],
      [1, 1, 1, 2_000, 2_001, 2_002, 2_003],
      Array.from({ length: 5000 }, () => Math.floor(200 + rand() * 20_000)),
      // A long tail: stalls up to 30 s make the histogram grow past its first array.
      Array.from({ length: 300 }, () => Math.floor(1 + rand() ** 4 * 30_000_000)),
    ];
    for (const values of sets) {
      const { lean, reference } = both(values);
      const a = decodeHistogram(lean);
      const b = decodeHistogram(reference);
      expect(a.totalCount).toBe(values.length);
      expect(a.minNonZeroValue).toBe(b.minNonZeroValue);
      expect(a.maxValue).toBe(b.maxValue);
      for (const p of [0, 10, 50, 90, 99, 99.9, 100]) expect(a.getValueAtPercentile(p), `p${p}`).toBe(b.getValueAtPercentile(p));
      expect(summarizeHistogram(mergeEncodedHistograms([lean, lean]))).toEqual(summarizeHistogram(mergeEncodedHistograms([reference, reference])));
      a.destroy();
      b.destroy();
    }
  });

  it('reset starts a fresh second and the array keeps working after growing', () => {
    const h = new LatencyHistogram();
    h.recordValue(25_000_000);
    h.recordValue(700);
    h.reset();
    expect(h.totalCount).toBe(0);
    h.recordValue(700);
    const d = decodeHistogram(h.encodeIntoCompressedBase64());
    expect(d.totalCount).toBe(1);
    expect(d.maxValue).toBe(700);
    d.destroy();
  });
});
