// Opens report.html in a real headless Chromium (Debian's chromium driven by playwright-core):
// every chart drawn, the table readable, no network request and no error. Keeps a screenshot.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReports } from '../../src/report/index.js';
import { writeFixtureRun } from './fixture.js';

const CHROMIUM = '/usr/bin/chromium';

// The project compiles without the DOM lib; these are the few browser shapes the page functions use.
interface PageCanvas {
  id: string;
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
  getBoundingClientRect(): { width: number };
}
interface PageGlobals {
  Chart: {
    getChart(id: string): {
      tooltip: { getActiveElements(): unknown[] };
      legend: { legendHitBoxes: { left: number; top: number; width: number; height: number }[] };
      isDatasetVisible(index: number): boolean;
    };
  };
  document: { documentElement: { scrollWidth: number }; querySelectorAll(sel: string): Iterable<PageCanvas> };
}
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  // Stated reason, visible in the test output: .ci/run installs it with `apt-get install -y chromium`.
  console.warn(`skipping the report browser test: ${CHROMIUM} is absent (apt-get install -y chromium)`);
}

describe.skipIf(!haveChromium)('report.html in Chromium', () => {
  let parent: string;
  let browser: Browser;
  let html: string;
  let compareHtml: string;

  beforeAll(async () => {
    parent = await mkdtemp(path.join(tmpdir(), 'attestorm-browser-'));
    const dir = await writeFixtureRun({ parent, name: 'run-a' });
    html = (await renderReports(dir, { formats: ['html'] })).files[0]!;
    const other = await writeFixtureRun({ parent, name: 'run-b', seed: 9 });
    compareHtml = (await renderReports([dir, other], { outDir: path.join(parent, 'cmp'), formats: ['html'] })).files[0]!;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await rm(parent, { recursive: true, force: true });
  });

  async function open(file: string, viewport = { width: 1280, height: 900 }) {
    const page = await browser.newPage({ viewport });
    const requests: string[] = [];
    const errors: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    return { page, requests, errors };
  }

  /** Per canvas: its id and how many pixels are not fully transparent. */
  async function drawnPixels(page: import('playwright-core').Page) {
    return page.$$eval('canvas', (canvases) =>
      canvases.map((el) => {
        const c = el as unknown as PageCanvas;
        const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
        let painted = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) painted++;
        return { id: c.id, painted, width: c.width };
      }),
    );
  }

  it('draws every chart, shows one table row per placement, requests nothing and logs no error', async () => {
    const { page, requests, errors } = await open(html);
    const canvases = await drawnPixels(page);
    expect(canvases.map((c) => c.id)).toEqual(['chart-memory', 'chart-rps', 'chart-inflight', 'chart-latency', 'chart-rejections']);
    for (const c of canvases) expect(c.painted, `${c.id} has drawn pixels`).toBeGreaterThan(5000);
    // The artifact shows the page as a reader first sees it, before the hover and legend clicks below.
    await mkdir('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/report.png', fullPage: true });

    const rows = await page.$$eval('table[data-testid="variants"] tbody tr', (trs) => trs.map((tr) => tr.querySelector('th')!.textContent));
    expect(rows).toEqual(['pre-attestation', 'post-attestation', 'disabled']);
    expect(await page.textContent('[data-testid="verdict"]')).toContain('disabled OOM-killed once');
    // The scenario description holds markup characters: shown as text, never parsed as HTML.
    expect(await page.textContent('main')).toContain('<with markup & "quotes">');

    // A hover shows a tooltip: the charts are interactive, not pictures.
    // The chart may sit below the first screen (the table is wide): bring it into view first.
    await page.locator('#chart-memory').scrollIntoViewIfNeeded();
    const box = (await page.locator('#chart-memory').boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
    const tooltipShown = await page.evaluate(() => {
      const chart = (globalThis as unknown as PageGlobals).Chart.getChart('chart-memory');
      return chart.tooltip.getActiveElements().length;
    });
    expect(tooltipShown).toBeGreaterThan(0);

    // Clicking a legend key hides that series (the first key is pre-attestation's memory line).
    // The legend sits below the fold at this size: scroll first and let the responsive chart settle
    // (two frames), so the hit box read below is the one the click lands on.
    await page.locator('#chart-memory').scrollIntoViewIfNeeded();
    await page.evaluate(() => {
      const g = globalThis as unknown as { requestAnimationFrame(cb: () => void): void };
      const raf = (cb: () => void) => g.requestAnimationFrame(cb);
      return new Promise<void>((r) => raf(() => raf(r)));
    });
    const hit = await page.evaluate(() => (globalThis as unknown as PageGlobals).Chart.getChart('chart-memory').legend.legendHitBoxes[0]!);
    const visible = () => page.evaluate(() => (globalThis as unknown as PageGlobals).Chart.getChart('chart-memory').isDatasetVisible(0));
    expect(await visible()).toBe(true);
    await page.locator('#chart-memory').click({ position: { x: hit.left + hit.width / 2, y: hit.top + hit.height / 2 } });
    await expect.poll(visible, { timeout: 2000 }).toBe(false);

    // With scripts the note is gone.
    expect(await page.locator('#charts-need-js').count()).toBe(0);
    expect(requests).toEqual([pathToFileURL(html).href]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('keeps the table readable without JavaScript', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(pathToFileURL(html).href);
    const cells = await page.$$eval('table[data-testid="variants"] tbody tr', (trs) => trs.length);
    expect(cells).toBe(3);
    expect(await page.locator('[data-testid="verdict"]').isVisible()).toBe(true);
    // Without scripts a note points to the PNGs.
    expect(await page.getByText('The charts need JavaScript').isVisible()).toBe(true);
    await context.close();
  });

  it('fits a narrow screen: charts shrink to the viewport, the table scrolls inside its box', async () => {
    const { page, errors } = await open(html, { width: 390, height: 844 });
    const widths = await page.evaluate(() => {
      const { document } = globalThis as unknown as PageGlobals;
      return {
        doc: document.documentElement.scrollWidth,
        canvases: [...document.querySelectorAll('canvas')].map((c) => c.getBoundingClientRect().width),
      };
    });
    expect(widths.doc).toBeLessThanOrEqual(390);
    for (const w of widths.canvases) expect(w).toBeLessThanOrEqual(390);
    const canvases = await drawnPixels(page);
    for (const c of canvases) expect(c.painted).toBeGreaterThan(1000);
    expect(errors).toEqual([]);
    await page.screenshot({ path: 'test-artifacts/report-narrow.png', fullPage: false });
    await page.close();
  });

  it('renders a comparison of two runs with a delta table', async () => {
    const { page, requests, errors } = await open(compareHtml);
    expect(await page.$$eval('table[data-testid="variants"]', (t) => t.length)).toBe(2);
    const deltaRows = await page.$$eval('table[data-testid="deltas"] tbody tr', (trs) => trs.length);
    expect(deltaRows).toBe(3);
    for (const c of await drawnPixels(page)) expect(c.painted).toBeGreaterThan(5000);
    expect(requests).toHaveLength(1);
    expect(errors).toEqual([]);
    await page.close();
  });
});
