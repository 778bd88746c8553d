// Opens the reports of real run folders in headless Chromium, as a reader would, at a laptop width and
// a phone width: nothing may be wider than its box, no table row may grow tall, and the memory chart's
// axis must fit the measured peaks (a limit far above them must not squeeze the curves). Screenshots of
// every page stay in a temp folder named in the output, for a reader to look at.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReports } from '../../src/report/index.js';
import { copyRecordedRun, RECORDED_RUNS, type RecordedRun } from './recorded-runs.js';

const CHROMIUM = '/usr/bin/chromium';
const MiB = 2 ** 20;
/** The memory axis may reach past the largest peak by this factor at most (room for the top tick). */
const AXIS_HEADROOM = 1.6;
const WIDTHS = [
  { name: 'laptop', width: 1400, height: 900 },
  { name: 'small-laptop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
];

// The project compiles without the DOM lib; these are the few browser shapes the page functions use.
interface Box {
  tagName: string;
  className: string;
  scrollWidth: number;
  clientWidth: number;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { height: number; width: number };
}
interface PageGlobals {
  document: { documentElement: Box; querySelectorAll(sel: string): Iterable<Box> };
  getComputedStyle(el: Box): { lineHeight: string };
  Chart: { getChart(id: string): { scales: { y: { max: number } }; data: { datasets: { label: string }[] } } };
}

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`skipping the report layout test: ${CHROMIUM} is absent (apt-get install -y chromium)`);

describe.skipIf(!haveChromium)('report.html of a real run, at a laptop and a phone width', () => {
  let parent: string;
  let shots: string;
  let browser: Browser;
  const reports = new Map<RecordedRun, { html: string; largestPeakMiB: number }>();

  beforeAll(async () => {
    parent = await mkdtemp(path.join(tmpdir(), 'attestorm-layout-'));
    shots = path.join(parent, 'screenshots');
    await mkdir(shots);
    for (const name of RECORDED_RUNS) {
      const dir = await copyRecordedRun(name, parent);
      const results = JSON.parse(await readFile(path.join(dir, 'results.json'), 'utf8')) as { variants: { peakMemoryBytes: number | null }[] };
      const largestPeakMiB = Math.max(...results.variants.map((v) => (v.peakMemoryBytes ?? 0) / MiB));
      reports.set(name, { html: (await renderReports(dir, { formats: ['html'] })).files[0]!, largestPeakMiB });
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    // The run copies go; the screenshots stay for a reader (the folder is named below).
    if (parent) for (const name of RECORDED_RUNS) await rm(path.join(parent, name), { recursive: true, force: true });
    if (shots) console.log(`report screenshots: ${shots}`);
  });

  for (const name of RECORDED_RUNS) {
    for (const view of WIDTHS) {
      it(`${name} at ${view.width} px: nothing overflows, rows stay short, the memory axis fits the peaks`, async () => {
        const { html, largestPeakMiB } = reports.get(name)!;
        const page = await browser.newPage({ viewport: { width: view.width, height: view.height } });
        const errors: string[] = [];
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });
        await page.screenshot({ path: path.join(shots, `${name}-${view.width}.png`), fullPage: true });
        await page.locator('#chart-memory').screenshot({ path: path.join(shots, `${name}-${view.width}-memory.png`) });

        const layout = await page.evaluate(() => {
          const g = globalThis as unknown as PageGlobals;
          const root = g.document.documentElement;
          const describe = (el: Box) =>
            `${el.tagName.toLowerCase()}${el.className ? `.${el.className.split(' ').join('.')}` : ''}${el.getAttribute('data-testid') ? `[${el.getAttribute('data-testid')}]` : ''}`;
          // Every box that holds a table, a chart or a block of text: none may be scrolled sideways.
          const boxes = [...g.document.querySelectorAll('main, .table-wrap, table, details, figure, .chart-box, canvas, pre, dl, .verdict')];
          const overflowing = boxes.filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => `${describe(el)} ${el.scrollWidth} > ${el.clientWidth}`);
          const rows = [...g.document.querySelectorAll('table[data-testid="variants"] tbody tr')].map((tr) => {
            const cell = [...(tr as unknown as { querySelectorAll(s: string): Iterable<Box> }).querySelectorAll('td')][0]!;
            return { height: tr.getBoundingClientRect().height, line: parseFloat(g.getComputedStyle(cell).lineHeight) };
          });
          const chart = g.Chart.getChart('chart-memory');
          return {
            page: { scrollWidth: root.scrollWidth, clientWidth: root.clientWidth },
            overflowing,
            rows,
            axisMax: chart.scales.y.max,
            labels: chart.data.datasets.map((d) => d.label),
          };
        });

        expect(layout.page.scrollWidth, 'page width').toBeLessThanOrEqual(layout.page.clientWidth);
        expect(layout.overflowing, 'boxes wider than their container').toEqual([]);
        expect(layout.rows.length).toBeGreaterThan(0);
        // On a laptop each variant is one line of figures (two where a header wraps a cell), never a paragraph.
        if (view.width >= 1280) for (const r of layout.rows) expect(r.height, 'table row height (px)').toBeLessThanOrEqual(2 * r.line + 16);

        expect(layout.axisMax, `memory axis max vs the largest peak ${largestPeakMiB.toFixed(1)} MiB`).toBeGreaterThanOrEqual(largestPeakMiB);
        expect(layout.axisMax, `memory axis max vs the largest peak ${largestPeakMiB.toFixed(1)} MiB`).toBeLessThanOrEqual(AXIS_HEADROOM * largestPeakMiB);
        // The 1 GiB limit is off the fitted scale: it is still named, marked at the top edge.
        expect(
          layout.labels.some((l) => /limit 1 GiB.*↑/.test(l)),
          `legend ${JSON.stringify(layout.labels)}`,
        ).toBe(true);
        expect(errors).toEqual([]);
        await page.close();
      });
    }
  }
});
