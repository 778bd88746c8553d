import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildChartSpecs, deriveReport, loadRun, renderReports } from '../../src/report/index.js';
import { writeFixtureRun } from './fixture.js';

const HOSTILE = '</script><script>alert(1)</script><!-- & \u2028';

let parent: string;
let html: string;
let dir: string;

beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'attestorm-html-'));
  dir = await writeFixtureRun({ parent, name: 'hostile' });
  // Everything in a run folder is editable text: make the scenario and an expectation hostile.
  const file = path.join(dir, 'results.json');
  const results = JSON.parse(await readFile(file, 'utf8'));
  results.scenario.name = HOSTILE;
  results.scenario.resolved.name = HOSTILE;
  results.variants[1].expectations[1].message = HOSTILE;
  results.command = `attestorm run '${HOSTILE}'`;
  await writeFile(file, JSON.stringify(results));
  const { files } = await renderReports(dir, { formats: ['html'] });
  html = await readFile(files[0]!, 'utf8');
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

// Boolean checks: a failing toContain on a 250 KB page would print all of Chart.js.
const has = (text: string) => html.includes(text);

describe('report.html', () => {
  it('escapes run data: no injected element survives', () => {
    expect(has('<script>alert(1)')).toBe(false);
    expect(has('&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;')).toBe(true);
    // Exactly the four script elements the page consists of: chart data, Chart.js, the zoom plugin, the bootstrap.
    expect(html.match(/<script[\s>]/g)?.length).toBe(4);
    expect(html.match(/<\/script>/g)?.length).toBe(4);
  });

  it('embeds the chart definitions as JSON that reads back unchanged', async () => {
    const m = /<script type="application\/json" id="attestorm-charts">([\s\S]*?)<\/script>/.exec(html);
    expect(m).not.toBeNull();
    const embedded = JSON.parse(m![1]!);
    const expected = buildChartSpecs(deriveReport([await loadRun(dir)]));
    expect(embedded).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(embedded.map((s: { id: string }) => s.id)).toEqual(['memory', 'rps', 'inflight', 'rejections']);
  });

  it('forbids every request with a CSP and inlines Chart.js and its zoom plugin instead of linking them', () => {
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)![1]!.replace(/&#39;/g, "'");
    expect(csp).toBe("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:");
    expect(/<(script|link|img|iframe)[^>]+(src|href)=/i.test(html)).toBe(false);
    expect(/Chart\.js v4\.\d+\.\d+/.test(html)).toBe(true);
    expect(has('chartjs-plugin-zoom v2.2.0')).toBe(true);
    expect(has('Hammer.JS - v2.0.7')).toBe(true);
  });

  it('shows the scenario as YAML, the fidelity, the modeled costs and the rerun command', () => {
    const yamlBlock = /<h2>Scenario<\/h2>[\s\S]*?<pre data-testid="scenario-resolved"><code>([\s\S]*?)<\/code><\/pre>/.exec(html)![1]!;
    const unescaped = yamlBlock
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&');
    expect(parseYaml(unescaped)).toMatchObject({ name: HOSTILE, agent: { memoryLimit: '320Mi' }, load: { pods: 4, workersPerPod: 100 } });
    expect(has('real kernel OOM kills in a memory cgroup')).toBe(true);
    expect(has('<dt>every variant</dt><dd>each attestation in flight holds 256Ki more (model.attestationWorkingSet)</dd>')).toBe(true);
    expect(has('<pre><code>attestorm run &#39;&lt;/script&gt;')).toBe(true);
  });

  it('keeps the comparison table to counts: expectation sentences are listed under it, the rest of the figures in a second table', () => {
    const variants = /<table class="cards" data-testid="variants">([\s\S]*?)<\/table>/.exec(html)![1]!;
    expect(variants.includes('storm calls/s')).toBe(true);
    // Which memory figure the peaks are, in the heading and in a sentence under the table.
    expect(variants.includes('peak working set (MiB)')).toBe(true);
    const note = /<p class="meta" data-testid="memory-measure">([^<]*)<\/p>/.exec(html)?.[1] ?? '';
    expect(note.includes('working set = cgroup usage − inactive file pages, as kubectl top')).toBe(true);
    expect(variants.includes('1 of 2 failed')).toBe(true);
    expect(variants.includes('&lt;/script&gt;')).toBe(false);
    const open = /<ul class="expect" data-testid="expectations-open">([\s\S]*?)<\/ul>/.exec(html)![1]!;
    expect(open.includes('&lt;/script&gt;&lt;script&gt;alert(1)')).toBe(true);
    expect(
      /<details class="more"><summary>More figures per variant[^<]*<\/summary>\s*<div class="table-wrap"><table class="cards" data-testid="variant-details">/.test(
        html,
      ),
    ).toBe(true);
  });
});
