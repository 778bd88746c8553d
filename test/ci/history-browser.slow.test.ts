// Opens history.html over five real run folders (one in the older schema) in headless Chromium (Debian's chromium driven by
// playwright-core): every chart drawn, the failing run marked in the table and on the charts, commit
// and versions in the tooltip on hover, no request and no error.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeHistory } from '../../src/ci/index.js';
import { writeHistoryFolder } from './history-fixture.js';

const CHROMIUM = '/usr/bin/chromium';

// The project compiles without the DOM lib; the few browser shapes used here.
interface PageCanvas {
  id: string;
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
}
interface HistoryChart {
  getDatasetMeta(i: number): { data: { x: number; y: number; options: { pointStyle: string } }[] };
  tooltip: { getActiveElements(): unknown[]; title: string[]; body: { lines: string[] }[]; afterBody: string[] };
}
interface PageGlobals {
  Chart: { getChart(id: string): HistoryChart };
}

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`skipping the history browser test: ${CHROMIUM} is absent (apt-get install -y chromium)`);

describe.skipIf(!haveChromium)('history.html in Chromium', () => {
  let parent: string;
  let browser: Browser;
  let html: string;

  beforeAll(async () => {
    parent = await mkdtemp(path.join(tmpdir(), 'attestorm-history-browser-'));
    const root = await writeHistoryFolder(parent);
    html = writeHistory(root, { scenario: 'quick', outDir: path.join(parent, 'out') }).files[0]!;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await rm(parent, { recursive: true, force: true });
  });

  async function open(file: string): Promise<{ page: Page; requests: string[]; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
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

  it('draws three charts, marks the failing run, shows commit and versions on hover, requests nothing', async () => {
    const { page, requests, errors } = await open(html);
    const painted = await page.$$eval('canvas', (els) =>
      els.map((el) => {
        const c = el as unknown as PageCanvas;
        const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
        let n = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++;
        return { id: c.id, n };
      }),
    );
    expect(painted.map((p) => p.id)).toEqual(['chart-peak-memory', 'chart-oom-kills', 'chart-bystander-success']);
    for (const p of painted) expect(p.n, `${p.id} has drawn pixels`).toBeGreaterThan(5000);
    await mkdir('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/history.png', fullPage: true });

    // Table: oldest first; the fourth night is the one a gate would have failed.
    const rows = await page.$$eval('table[data-testid="history-runs"] tbody tr', (trs) =>
      trs.map((tr) => ({ dir: tr.getAttribute('data-dir'), cls: tr.getAttribute('class'), text: tr.textContent })),
    );
    expect(rows.map((r) => r.dir)).toEqual(['old', 'nightly-1', 'nightly-2', 'nightly-3', 'nested/nightly-4']);
    expect(rows.map((r) => r.cls)).toEqual(['passed', 'passed', 'passed', 'passed', 'failed']);
    expect(rows[0]!.text).toContain('(schemaVersion 1, converted)');
    expect(rows[4]!.text).toContain('gate vs nightly-3: FAILED — 3 regressed');
    expect(rows[4]!.text).toContain('pre-attestation peak memory +40.0%');
    expect(await page.textContent('[data-testid="verdict"]')).toContain('1 of 4 gated runs would have failed');

    // On the chart the regressed variant's point in the failing run is a triangle; post-attestation did not regress.
    const styles = await page.evaluate(() =>
      (globalThis as unknown as PageGlobals).Chart.getChart('chart-peak-memory')
        .getDatasetMeta(0)
        .data.map((p) => p.options.pointStyle),
    );
    expect(styles).toEqual(['circle', 'circle', 'circle', 'circle', 'triangle']);
    const postStyles = await page.evaluate(() =>
      (globalThis as unknown as PageGlobals).Chart.getChart('chart-peak-memory')
        .getDatasetMeta(1)
        .data.map((p) => p.options.pointStyle),
    );
    expect(postStyles).toEqual(['circle', 'circle', 'circle', 'circle', 'circle']);

    // Hover the last run's point: the tooltip names its commit, the tool and agent versions and the gate.
    const point = await page.evaluate(() => {
      const p = (globalThis as unknown as PageGlobals).Chart.getChart('chart-peak-memory').getDatasetMeta(0).data[4]!;
      return { x: p.x, y: p.y };
    });
    const box = (await page.locator('#chart-peak-memory').boundingBox())!;
    await page.mouse.move(box.x + point.x, box.y + point.y);
    await expect
      .poll(() => page.evaluate(() => (globalThis as unknown as PageGlobals).Chart.getChart('chart-peak-memory').tooltip.getActiveElements().length))
      .toBeGreaterThan(0);
    const tip = await page.evaluate(() => {
      const t = (globalThis as unknown as PageGlobals).Chart.getChart('chart-peak-memory').tooltip;
      return { title: t.title, body: t.body.flatMap((b) => b.lines), after: t.afterBody };
    });
    expect(tip.title).toEqual(['2026-11-30 02:00']);
    expect(tip.body).toEqual(['pre-attestation: 140 MiB', 'post-attestation: 60 MiB']);
    expect(tip.after).toEqual([
      '',
      'run nested/nightly-4',
      'commit 444444444444',
      'attestorm 0.2.0',
      'pre-attestation agent 0.1.0',
      'post-attestation agent 0.1.0',
      'gate vs nightly-3: FAILED — 3 regressed',
    ]);

    expect(await page.locator('#charts-need-js').count()).toBe(0);
    expect(requests).toEqual([pathToFileURL(html).href]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('keeps the table readable without JavaScript', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(pathToFileURL(html).href);
    expect(await page.$$eval('table[data-testid="history-runs"] tbody tr', (trs) => trs.length)).toBe(5);
    expect(await page.getByText('The charts need JavaScript').isVisible()).toBe(true);
    await context.close();
  });
});
