// The fetch schedule's lines are bounded: up to the cap a second one line each, the rest of that
// second folded into one line with its count and answer-time histogram; the figures count every
// request that arrived in the window, folded or not.
import { describe, expect, it } from 'vitest';
import type { KubeletFetchSample, KubeletFetchesSecond } from '../../src/contract/index.js';
import { KubeletFetchLines } from '../../src/platform/kubelet-fetch-lines.js';
import { answerTimes } from '../../src/scenario/index.js';

function fetch(t: number, answerMs: number, status = 200): KubeletFetchSample {
  return { kind: 'kubelet-fetch', t, answerStart: t + answerMs - 1, answerEnd: t + answerMs, status, bytes: 1000, queueWaitMs: 0, conn: 1, inFlight: 1 };
}

describe('kubelet fetch lines', () => {
  it('writes up to the cap a second and folds the rest of that second into one line', () => {
    const out: (KubeletFetchSample | KubeletFetchesSecond)[] = [];
    const lines = new KubeletFetchLines((l) => out.push(l), 3);
    // Second 0: five requests end in it; second 1: one; a 500 among the folded.
    for (let i = 0; i < 5; i++) lines.add(fetch(i * 100, 50, i === 4 ? 500 : 200), i * 100 + 50);
    lines.add(fetch(1100, 100), 1200);
    lines.flush();
    expect(out.map((l) => l.kind)).toEqual(['kubelet-fetch', 'kubelet-fetch', 'kubelet-fetch', 'kubelet-fetches', 'kubelet-fetch']);
    const folded = out[3] as KubeletFetchesSecond;
    expect(folded).toMatchObject({ t: 0, requests: 2, byStatus: { '200': 1, '500': 1 }, bytes: 2000, abandoned: 0 });
    expect(answerTimes([folded.answerHistogram])?.max).toBeCloseTo(50, 0);
    const figures = lines.figures(0, 1000, 1);
    expect(figures).toMatchObject({ requests: 5, answered: 5, byStatus: { '200': 4, '500': 1 }, bytes: 5000, aggregated: 2 });
    expect(answerTimes([figures.answerHistogram])?.p50).toBeCloseTo(50, 0);
  });

  it('bounds a storm that fetches 100 times a second for five minutes to the cap', () => {
    let written = 0;
    let bytes = 0;
    const lines = new KubeletFetchLines((l) => {
      written++;
      bytes += JSON.stringify(l).length + 1;
    });
    for (let i = 0; i < 100 * 300; i++) lines.add(fetch(i * 10, 30), i * 10 + 30);
    lines.flush();
    // 20 lines and one folded line a second: about 1.5 MB, not 30,000 lines.
    expect(written).toBeLessThanOrEqual(21 * 301);
    expect(bytes).toBeLessThan(2_000_000);
  });
});
