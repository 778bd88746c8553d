import { describe, expect, it } from 'vitest';
import { formatDurationMs, formatSize, resolvedWithDefaults } from '../../src/report/scenario-as-written.js';
import { parseScenario } from '../../src/scenario/index.js';

describe("the scenario in the user's units", () => {
  it('durations and sizes read as people write them', () => {
    expect(formatDurationMs(20_000)).toBe('20s');
    expect(formatDurationMs(1500)).toBe('1500ms');
    expect(formatDurationMs(120_000)).toBe('2m');
    expect(formatSize(192 * 2 ** 20)).toBe('192Mi');
    expect(formatSize(2 ** 30)).toBe('1Gi');
    expect(formatSize(1000)).toBe('1000');
  });

  it('shows the resolved scenario in those units and marks what the file did not give as a default', () => {
    const written = { name: 'x', duration: '20s', agent: { memoryLimit: '192Mi' }, variants: [{ name: 'a', agent: { placement: 'disabled' } }] };
    const { scenario } = parseScenario(written);
    const text = resolvedWithDefaults(scenario, written);
    expect(text).toMatch(/^duration: 20s$/m);
    expect(text).not.toContain('duration: 20000');
    expect(text).toMatch(/memoryLimit: 192Mi$/m);
    expect(text).not.toContain('201326592');
    expect(text).toMatch(/^warmup: 2s # default$/m);
    expect(text).toMatch(/placement: disabled$/m);
    expect(text).toMatch(/startTimeout: 30s # default$/m);
  });
});
