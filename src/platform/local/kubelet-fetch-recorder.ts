// The kubelet emulator's request log into one repetition's samples: every /pods request from the
// sandbox's start (the agent's own start-up fetches included) on the repetition's timeline, held
// until the timeline's origin is known, bounded per second by KubeletFetchLines; at the end, the
// figures of the requests that arrived while the calls ran.
import type { KubeletFetchFigures, KubeletFetchSample } from '../../contract/index.js';
import type { KubeletEmulator, KubeletRequestRecord } from '../../sandbox/index.js';
import { KubeletFetchLines } from '../kubelet-fetch-lines.js';
import type { RepetitionRecord } from '../repetition.js';

const tenth = (x: number) => Math.round(x * 10) / 10;

export interface KubeletFetchRecorder {
  /** The figures of the requests that arrived between `from` and `to` (Date.now() values), over `seconds`. */
  figures(from: number, to: number, seconds: number): KubeletFetchFigures;
  /** Stops listening and writes what is held; call before the samples file closes. */
  stop(): void;
}

export function recordKubeletFetches(r: RepetitionRecord, kubelet: KubeletEmulator): KubeletFetchRecorder {
  const lines = new KubeletFetchLines((line) => {
    r.writer.write(line);
    r.onSample?.(line);
  });
  const held: { rec: KubeletRequestRecord; endedAt: number }[] = [];
  const t = (at: number) => tenth(r.timeline.t(at));
  const write = (rec: KubeletRequestRecord, endedAt: number) => {
    const line: KubeletFetchSample = {
      kind: 'kubelet-fetch',
      t: t(rec.arrivedAt),
      answerStart: rec.answerStartedAt === null ? null : t(rec.answerStartedAt),
      answerEnd: rec.answerEndedAt === null ? null : t(rec.answerEndedAt),
      status: rec.status,
      bytes: rec.bytes,
      queueWaitMs: tenth(rec.queueWaitMs),
      conn: rec.conn,
      inFlight: rec.inFlight,
      ...(rec.abandoned ? { abandoned: true as const } : {}),
    };
    lines.add(line, t(endedAt));
  };
  const release = () => {
    for (const h of held.splice(0)) write(h.rec, h.endedAt);
  };
  const unsubscribe = kubelet.onRequest((rec) => {
    const endedAt = rec.answerEndedAt ?? Date.now();
    if (!r.timeline.fixed) {
      held.push({ rec, endedAt });
      return;
    }
    release();
    write(rec, endedAt);
  });
  return {
    figures: (from, to, seconds) => {
      if (r.timeline.fixed) release();
      return lines.figures(t(from), t(to), seconds);
    },
    stop: () => {
      unsubscribe();
      if (r.timeline.fixed) release();
      lines.flush();
    },
  };
}
