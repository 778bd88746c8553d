import { describe, expect, it } from 'vitest';
import { deepMerge } from '../../src/util/index.js';

describe('deepMerge', () => {
  it('merges plain objects key by key, at every depth', () => {
    expect(deepMerge({ a: { b: { c: 1, d: 2 } } }, { a: { b: { d: 3 }, e: 4 } })).toEqual({ a: { b: { c: 1, d: 3 }, e: 4 } });
  });

  it('replaces arrays, scalars and nulls whole', () => {
    expect(deepMerge({ a: [1, 2], b: { x: 1 }, c: 1 }, { a: [3], b: null, c: { y: 2 } })).toEqual({ a: [3], b: null, c: { y: 2 } });
  });

  it('keeps the base value where over leaves a key undefined', () => {
    expect(deepMerge({ a: 1, b: { c: 2 } }, { a: undefined, b: { c: undefined } })).toEqual({ a: 1, b: { c: 2 } });
  });

  it('changes neither input', () => {
    const base = { a: { b: 1 } };
    const over = { a: { c: 2 } };
    deepMerge(base, over);
    expect(base).toEqual({ a: { b: 1 } });
    expect(over).toEqual({ a: { c: 2 } });
  });
});
