// The one Timeline both runners (local and cluster) mark phases and events on.
import { describe, expect, it } from 'vitest';
import { Timeline, type SampleLine } from '../../src/scenario/index.js';

describe('Timeline', () => {
  it('holds events until the origin is fixed, then writes them relative to it; a second fix moves zero', () => {
    const lines: SampleLine[] = [];
    const tl = new Timeline((l) => lines.push(l));
    tl.enter('starting-pods', 1000);
    tl.event('note', 'applied', 1500);
    expect(lines).toEqual([]);
    tl.fix(3000);
    expect(lines).toEqual([
      { kind: 'event', type: 'phase', phase: 'starting-pods', t: -2000 },
      { kind: 'event', type: 'note', detail: 'applied', t: -1500 },
    ]);
    tl.enter('warmup', 3500);
    tl.fix(4000);
    tl.event('load-start', undefined, 4000);
    expect(lines.slice(2)).toEqual([
      { kind: 'event', type: 'phase', phase: 'warmup', t: 500 },
      { kind: 'event', type: 'load-start', t: 0 },
    ]);
    expect(tl.t(4250)).toBe(250);
  });

  it('phaseAt tells which phase a moment fell in', () => {
    const tl = new Timeline(() => {});
    tl.enter('starting-pods', 100);
    tl.enter('warmup', 200);
    tl.enter('load', 300);
    tl.enter('drain', 400);
    expect(tl.phaseAt(50)).toBe('starting-pods');
    expect(tl.phaseAt(250)).toBe('warmup');
    expect(tl.phaseAt(300)).toBe('load');
    expect(tl.phaseAt(1000)).toBe('drain');
    expect(tl.phase).toBe('drain');
  });
});
