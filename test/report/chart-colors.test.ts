// Chart colours are per variant: variants named after a placement keep that placement's hue; any
// other names each get a colour of their own, the same one on every chart of the report.
import { describe, expect, it } from 'vitest';
import { variantPalette } from '../../src/report/index.js';

describe('variant palette', () => {
  it('gives six arbitrarily named variants six different colours, stable on every call', () => {
    const names = ['ref-pre', 'ref-post', 'ref-off', 'ref-off-older', 'spire-limited', 'spire-off'];
    const colorOf = variantPalette(names);
    const colors = names.map(colorOf);
    expect(new Set(colors).size).toBe(6);
    expect(names.map(colorOf)).toEqual(colors);
  });

  it('keeps the placements their own hues, distinct from the other variants', () => {
    const colorOf = variantPalette(['pre-attestation', 'disabled', 'disabled-unbounded', 'post-attestation']);
    expect(colorOf('pre-attestation')).toBe('#009E73');
    expect(colorOf('post-attestation')).toBe('#E69F00');
    expect(colorOf('disabled')).toBe('#CC79A7');
    expect(['#009E73', '#E69F00', '#CC79A7']).not.toContain(colorOf('disabled-unbounded'));
  });
});
