// Opens report.html in a real headless Chromium (Debian's chromium driven by playwright-core):
// every chart drawn, the table readable, no network request and no error. Keeps a screenshot.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReports } from '../../src/report/index.js';
import { TIME_CURSOR_COLOR } from '../../src/report/html-assets.js';
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
interface PageChart {
  tooltip: { getActiveElements(): unknown[] };
  legend: { legendHitBoxes: { left: number; top: number; width: number; height: number }[] };
  isDatasetVisible(index: number): boolean;
  scales: { x: { min: number; max: number; getPixelForValue(v: number): number }; y: { max: number } };
  chartArea: { top: number; bottom: number; left: number; right: number };
  data: { datasets: { label: string; data: { y: number | null }[]; type?: string }[] };
  $timeCursor: number | null;
  canvas: PageCanvas;
  currentDevicePixelRatio: number;
}
interface PageGlobals {
  Chart: { getChart(id: string): PageChart };
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
  let dir: string;
  let spikeHtml: string;

  beforeAll(async () => {
    parent = await mkdtemp(path.join(tmpdir(), 'attestorm-browser-'));
    dir = await writeFixtureRun({ parent, name: 'run-a' });
    // disabled's agent is OOM-killed: while it restarts its callers fail about 3,500 times a second.
    spikeHtml = (await renderReports(await writeFixtureRun({ parent, name: 'run-spike', downErrorsPerSecond: 3500 }), { formats: ['html'] })).files[0]!;
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
    expect(canvases.map((c) => c.id)).toEqual(['chart-memory', 'chart-rps', 'chart-inflight', 'chart-rejections']);
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

  /** Hovers a chart at a share of its plot area's width and height. */
  async function hover(page: import('playwright-core').Page, id: string, share: number) {
    await page.locator(`#${id}`).scrollIntoViewIfNeeded();
    const box = (await page.locator(`#${id}`).boundingBox())!;
    const area = await page.evaluate((chartId) => (globalThis as unknown as PageGlobals).Chart.getChart(chartId).chartArea, id);
    const at = { x: box.x + area.left + (area.right - area.left) * share, y: box.y + (area.top + area.bottom) / 2 };
    await page.mouse.move(at.x, at.y);
    return at;
  }
  const xRanges = (page: import('playwright-core').Page) =>
    page.evaluate(() =>
      ['memory', 'rps', 'inflight'].map((id) => {
        const x = (globalThis as unknown as PageGlobals).Chart.getChart(`chart-${id}`).scales.x;
        return [x.min, x.max];
      }),
    );

  /** Equal x ranges, but for the last bits of floating point. */
  const sameRange = (a: number[], b: number[]) => {
    expect(a[0]).toBeCloseTo(b[0]!, 9);
    expect(a[1]).toBeCloseTo(b[1]!, 9);
  };

  it('keeps the calls-per-second axis on the other lines when one variant spikes, and marks the spike with its value', async () => {
    const { page, requests, errors } = await open(spikeHtml);
    const rps = await page.evaluate(() => {
      const c = (globalThis as unknown as PageGlobals).Chart.getChart('chart-rps');
      const max = (i: number) => Math.max(...c.data.datasets[i]!.data.map((p) => p.y ?? 0));
      const lines = c.data.datasets.map((d, i) => ({ label: d.label, type: d.type, max: max(i) }));
      return { yMax: c.scales.y.max, lines };
    });
    const spike = rps.lines.find((l) => l.label === 'disabled other errors')!;
    const others = rps.lines.filter((l) => l.type !== 'scatter' && l !== spike);
    expect(spike.max).toBeGreaterThan(3000);
    expect(rps.yMax).toBeGreaterThanOrEqual(Math.max(...others.map((l) => l.max)));
    expect(rps.yMax).toBeLessThan(spike.max / 2);
    expect(rps.lines.filter((l) => l.type === 'scatter').map((l) => l.label)).toEqual(['disabled other errors ↑ (above the axis)']);

    // The ▲ and its value are drawn at the top edge, in disabled's colour: count those pixels with
    // the value label and again without it.
    await page.locator('#chart-rps').scrollIntoViewIfNeeded();
    const colourNearMark = () =>
      page.evaluate(() => {
        const c = (globalThis as unknown as PageGlobals).Chart.getChart('chart-rps');
        const i = c.data.datasets.findIndex((d) => d.type === 'scatter');
        const mark = (c as unknown as { getDatasetMeta(i: number): { data: { x: number; y: number }[] } }).getDatasetMeta(i).data[0]!;
        const r = c.currentDevicePixelRatio;
        const { data } = c.canvas
          .getContext('2d')
          .getImageData(Math.round((mark.x - 80) * r), Math.round((mark.y - 12) * r), Math.round(160 * r), Math.round(24 * r));
        let n = 0;
        // #CC79A7, allowing for antialiasing.
        for (let p = 0; p < data.length; p += 4) if (Math.abs(data[p]! - 0xcc) + Math.abs(data[p + 1]! - 0x79) + Math.abs(data[p + 2]! - 0xa7) < 90) n++;
        return n;
      });
    const withLabel = await colourNearMark();
    await page.evaluate(() => {
      const c = (globalThis as unknown as PageGlobals).Chart.getChart('chart-rps');
      const d = c.data.datasets.find((x) => x.type === 'scatter') as unknown as { offScaleLabels?: string[] };
      delete d.offScaleLabels;
      (c as unknown as { update(mode: string): void }).update('none');
    });
    const withoutLabel = await colourNearMark();
    expect(withoutLabel, 'the ▲ mark').toBeGreaterThan(20);
    expect(withLabel - withoutLabel, 'the value beside it').toBeGreaterThan(40);
    expect(requests).toEqual([pathToFileURL(spikeHtml).href]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('zooms and pans every time chart together (Ctrl + wheel, drag) and the reset button restores the range', async () => {
    const { page, requests, errors } = await open(html);
    const initial = await xRanges(page);
    expect(new Set(initial.map((r) => r.join()))).toHaveProperty('size', 1);
    const reset = page.locator('figure:has(#chart-rps) button.zoom-reset');
    expect(await reset.isDisabled()).toBe(true);

    await hover(page, 'chart-rps', 0.5);
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, -400);
    await page.keyboard.up('Control');
    await expect.poll(async () => (await xRanges(page))[1]![1]! - (await xRanges(page))[1]![0]!).toBeLessThan(initial[1]![1]! - initial[1]![0]!);
    const zoomed = await xRanges(page);
    // The other time charts took the same range.
    for (const r of zoomed) sameRange(r, zoomed[1]!);
    expect(await reset.isDisabled()).toBe(false);

    // A drag to the left moves the window later in time; its width stays.
    const at = await hover(page, 'chart-rps', 0.6);
    await page.mouse.down();
    await page.mouse.move(at.x - 150, at.y, { steps: 10 });
    await page.mouse.up();
    await expect.poll(async () => (await xRanges(page))[1]![0]).toBeGreaterThan(zoomed[1]![0]!);
    const panned = await xRanges(page);
    expect(panned[1]![1]! - panned[1]![0]!).toBeCloseTo(zoomed[1]![1]! - zoomed[1]![0]!, 5);
    for (const r of panned) sameRange(r, panned[1]!);

    // Any chart's reset button resets them all.
    await page.locator('figure:has(#chart-memory) button.zoom-reset').click();
    expect(await xRanges(page)).toEqual(initial);
    expect(await reset.isDisabled()).toBe(true);
    expect(requests).toEqual([pathToFileURL(html).href]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('hovering one time chart draws the same instant on every other time chart', async () => {
    const { page, errors } = await open(html);
    const cursors = () =>
      page.evaluate(() =>
        ['memory', 'rps', 'inflight', 'rejections'].map((id) => (globalThis as unknown as PageGlobals).Chart.getChart(`chart-${id}`).$timeCursor ?? null),
      );
    /** Share of the memory chart's plot rows with a pixel of the cursor's grey at instant x. */
    const cursorRows = (x: number) =>
      page.evaluate(
        ([instant, colour]) => {
          const c = (globalThis as unknown as PageGlobals).Chart.getChart('chart-memory');
          const r = c.currentDevicePixelRatio;
          const px = Math.round(c.scales.x.getPixelForValue(instant) * r);
          const top = Math.round(c.chartArea.top * r);
          const rows = Math.round((c.chartArea.bottom - c.chartArea.top) * r);
          const { data } = c.canvas.getContext('2d').getImageData(px - 1, top, 3, rows);
          const want = parseInt(colour.slice(1, 3), 16);
          let hit = 0;
          for (let row = 0; row < rows; row++) {
            let found = false;
            for (let col = 0; col < 3; col++) {
              const p = (row * 3 + col) * 4;
              const [red, green, blue, alpha] = [data[p]!, data[p + 1]!, data[p + 2]!, data[p + 3]!];
              // The canvas is transparent where nothing is drawn: only opaque grey counts.
              if (alpha > 0x80 && Math.abs(red - green) < 12 && Math.abs(green - blue) < 12 && red < want + 0x50) found = true;
            }
            if (found) hit++;
          }
          return hit / rows;
        },
        [x, TIME_CURSOR_COLOR] as const,
      );

    expect(await cursors()).toEqual([null, null, null, null]);
    const before = await hover(page, 'chart-rps', 0.7).then(() => cursors());
    expect(before[1]).not.toBeNull();
    await page.mouse.move(5, 5);
    // Nothing grey runs down the memory chart at that instant until a chart is hovered.
    expect(await cursorRows(before[1]!)).toBeLessThan(0.2);
    await hover(page, 'chart-rps', 0.7);
    const [memory, rps, inflight, rejections] = await cursors();
    expect(typeof rps).toBe('number');
    expect(memory).toBe(rps);
    expect(inflight).toBe(rps);
    // The bar chart has no time axis and no cursor.
    expect(rejections).toBeNull();
    expect(await cursorRows(rps!)).toBeGreaterThan(0.8);

    // Leaving the chart takes the cursor away everywhere.
    await page.mouse.move(5, 5);
    expect(await cursors()).toEqual([null, null, null, null]);
    expect(await cursorRows(rps!)).toBeLessThan(0.2);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("lists each variant's and outcome's latency percentiles as results.json records them", async () => {
    const { page } = await open(html);
    const shown = await page.$$eval('table[data-testid="latency"] tbody tr', (trs) =>
      trs.map((tr) => [tr.querySelector('th')!.textContent, ...[...tr.querySelectorAll('td')].map((td) => td.textContent)]),
    );
    const results = JSON.parse(await readFile(path.join(dir, 'results.json'), 'utf8')) as {
      variants: { name: string; latency: Record<string, { count: number; p50Ms: number; p90Ms: number; p99Ms: number; p999Ms: number; maxMs: number }> }[];
    };
    const words: Record<string, string> = { ok: 'ok', rateLimited: 'rate-limited', deadlineExceeded: 'deadline exceeded', error: 'other errors' };
    const ms = (v: number) => (v < 10 ? v.toFixed(2) : v.toFixed(1));
    const expected = results.variants.flatMap((v) =>
      Object.entries(v.latency).map(([outcome, l]) => [
        v.name,
        words[outcome],
        String(l.count),
        ms(l.p50Ms),
        ms(l.p90Ms),
        ms(l.p99Ms),
        ms(l.p999Ms),
        ms(l.maxMs),
      ]),
    );
    expect(expected.length).toBe(6);
    expect(shown).toEqual(expected);
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
    // A vertical swipe over a time chart scrolls the page; a sideways one pans the chart.
    const touch = await page.$$eval('figure.time-chart canvas', (cs) => cs.map((c) => (c as unknown as { style: { touchAction: string } }).style.touchAction));
    expect(touch.length).toBeGreaterThan(0);
    expect(new Set(touch)).toEqual(new Set(['pan-y']));
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
