import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadImage, createCanvas } from '@napi-rs/canvas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PNG_HEIGHT, PNG_WIDTH, renderReports } from '../../src/report/index.js';
import { writeFixtureRun } from './fixture.js';

let parent: string;
let files: string[];

beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'attestorm-png-'));
  const dir = await writeFixtureRun({ parent });
  ({ files } = await renderReports(dir, { formats: ['png', 'md'] }));
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

describe('PNG charts', () => {
  it('writes the four charts and names them in summary.md, without embedding images GitHub could not show', async () => {
    const names = files.map((f) => path.basename(f));
    expect(names).toEqual(['memory.png', 'rps.png', 'inflight.png', 'rejections.png', 'summary.md']);
    const md = await readFile(files.at(-1)!, 'utf8');
    for (const png of names.slice(0, 4)) expect(md).toContain(`\`${png}\``);
    expect(md).not.toContain('![');
  });

  it.each(['memory', 'rps', 'inflight', 'rejections'])('%s.png is a 1200×600 image on white with a drawn chart', async (id) => {
    const file = files.find((f) => path.basename(f) === `${id}.png`)!;
    const image = await loadImage(await readFile(file));
    expect([image.width, image.height]).toEqual([PNG_WIDTH, PNG_HEIGHT]);
    const canvas = createCanvas(image.width, image.height);
    const ctx = canvas.getContext('2d');
    ctx.drawImage(image, 0, 0);
    const { data } = ctx.getImageData(0, 0, image.width, image.height);
    const colours = new Set<number>();
    let transparent = 0;
    let white = 0;
    for (let i = 0; i < data.length; i += 4) {
      colours.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
      if (data[i + 3]! < 255) transparent++;
      if (data[i] === 255 && data[i + 1] === 255 && data[i + 2] === 255) white++;
    }
    // Opaque white background, but far from blank: lines, bars, antialiased text.
    expect(transparent).toBe(0);
    expect(white / (data.length / 4)).toBeGreaterThan(0.3);
    expect(colours.size).toBeGreaterThan(50);
    // The white-background plugin fills even the margin outside the chart area.
    expect([data[0], data[1], data[2]]).toEqual([255, 255, 255]);
  });
});
