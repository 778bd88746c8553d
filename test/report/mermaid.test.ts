// The time charts as GitHub draws them: Mermaid xychart-beta blocks in summary.md, read back by the
// syntax's rules (test/support/mermaid-xychart.ts), on a recorded run of the default scenario and on
// a five-minute fixture whose memory is sampled 3,000 times per variant.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MERMAID_MAX_POINTS, renderReports } from '../../src/report/index.js';
import { resample } from '../../src/report/render-mermaid.js';
import { mermaidBlocks, parseXyChart } from '../support/mermaid-xychart.js';
import { writeFixtureRun } from './fixture.js';
import { copyRecordedRun } from './recorded-runs.js';

let parent: string;
beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'attestorm-mermaid-'));
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

async function summaryOf(dir: string): Promise<string> {
  await renderReports(dir, { formats: ['md'] });
  return readFile(path.join(dir, 'summary.md'), 'utf8');
}

/** The sentence under a block: "Lines, in order: a (green), b (orange). …" → ['a', 'b']. */
function namedLines(md: string, blockIndex: number): string[] {
  const after = md.split('```mermaid').slice(blockIndex + 1)[0]!;
  const sentence = /\n\nLines, in order: (.*?)\. /.exec(after)![1]!;
  return sentence.split(/, (?=[^,]*\()/).map((s) => s.replace(/ \([a-z ]+\)$/, ''));
}

describe('Mermaid charts in summary.md', () => {
  it('memory, calls served and calls rejected per second of a recorded run: valid xychart-beta, one line per variant, named in order', async () => {
    const md = await summaryOf(await copyRecordedRun('quick-all-met', parent));
    const blocks = mermaidBlocks(md);
    const charts = blocks.map(parseXyChart);
    expect(charts.map((c) => c.title)).toEqual(['Agent memory (MiB)', 'Calls served per second', 'Calls rejected per second']);
    const variants = ['pre-attestation', 'post-attestation', 'disabled', 'disabled-unbounded'];
    expect(namedLines(md, 0)).toEqual(variants);
    expect(namedLines(md, 1)).toEqual(variants);
    // Only the variants whose limiter rejected calls have a rejected line.
    expect(namedLines(md, 2)).toEqual(['pre-attestation', 'post-attestation']);
    for (const [i, c] of charts.entries()) {
      expect(c.lines).toHaveLength(namedLines(md, i).length);
      expect(c.lines[0]!.length).toBeLessThanOrEqual(MERMAID_MAX_POINTS);
      expect(c.y.min).toBe(0);
      for (const line of c.lines) for (const v of line) expect(v >= c.y.min && v <= c.y.max).toBe(true);
      expect(c.palette).toHaveLength(c.lines.length);
    }
    // The peak survives the resampling: disabled-unbounded's 576.7 MiB is on the chart.
    expect(Math.max(...charts[0]!.lines[3]!)).toBeGreaterThan(570);
    expect(charts[0]!.palette!.slice(0, 3)).toEqual(['#009E73', '#E69F00', '#CC79A7']);
    // No image GitHub would need hosted.
    expect(md).not.toContain('![');
  });

  it('five minutes of 100 ms memory samples come down to at most 60 points per line', async () => {
    const md = await summaryOf(await writeFixtureRun({ parent, name: 'long', loadSeconds: 300 }));
    const charts = mermaidBlocks(md).map(parseXyChart);
    expect(charts.length).toBeGreaterThanOrEqual(2);
    for (const c of charts) {
      expect(c.lines[0]!.length).toBeLessThanOrEqual(MERMAID_MAX_POINTS);
      expect(c.lines[0]!.length).toBeGreaterThanOrEqual(MERMAID_MAX_POINTS - 1);
    }
  });

  it('the rules catch what Mermaid would refuse', () => {
    const good = ['xychart-beta', 'title "t"', 'x-axis "s" 0 --> 10', 'y-axis "MiB" 0 --> 5', 'line [1, 2]', 'line [3, 4]'];
    expect(parseXyChart(good).lines).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(() => parseXyChart([...good.slice(0, 5), 'line [3]'])).toThrow(/as long as the others/);
    expect(() => parseXyChart([...good.slice(0, 5), 'line [3, null]'])).toThrow(/numbers only/);
    expect(() => parseXyChart([...good.slice(0, 5), 'line [3, NaN]'])).toThrow(/numbers only/);
    expect(() => parseXyChart(['xychart', ...good.slice(1)])).toThrow(/first line is xychart-beta/);
    expect(() => parseXyChart([good[0]!, 'title t', ...good.slice(2)])).toThrow(/quoted title/);
    expect(() => parseXyChart([...good.slice(0, 2), 'x-axis "s" 10 --> 0', ...good.slice(3)])).toThrow(/min below max/);
    expect(() => parseXyChart(good.slice(0, 4))).toThrow(/at least one line/);
  });
});

describe('resampling a line onto the chart grid', () => {
  it('keeps the highest sample of a step, reads 0 where the agent was down and carries a value over a step without samples', () => {
    const points = [
      { x: 0, y: 1 },
      { x: 0.2, y: 9 },
      { x: 1, y: 2 },
      { x: 2, y: null },
      { x: 4, y: 5 },
    ];
    expect(resample(points, [0, 1, 2, 3, 4, 5], 'max')).toEqual([9, 2, 0, 0, 5, 0]);
    expect(resample(points, [0, 1, 2, 3, 4, 5], 'mean')).toEqual([5, 2, 0, 0, 5, 0]);
    expect(
      resample(
        [
          { x: 0, y: 3 },
          { x: 3, y: 4 },
        ],
        [0, 1, 2, 3],
        'max',
      ),
    ).toEqual([3, 3, 3, 4]);
  });
});
