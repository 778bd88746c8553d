// `renderReports`: load run folders, derive once, write each requested format. Used by
// `attestorm report` and at the end of `attestorm run`.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AttestormError, ConfigError } from '../errors.js';
import { buildChartSpecs } from './chart-configs.js';
import { deriveReport } from './derive.js';
import { loadRun } from './load-run.js';
import { renderHtml } from './render-html.js';
import { renderMarkdown } from './render-markdown.js';
import { renderMermaidCharts, type MermaidOptions } from './render-mermaid.js';
import { renderPng } from './render-png.js';
import { REPORT_FORMATS, type ExtraSection, type ReportData, type ReportFormat } from './report-model.js';

export type { ExtraSection } from './report-model.js';

export interface RenderOptions {
  /** Sections rendered elsewhere, shown in report.html and summary.md after the run's table. */
  extraSections?: ExtraSection[];
  /** Where to write. Default: the run folder with one run; reports/compare-<timestamp>/ with several. */
  outDir?: string;
  /** Default: every format. */
  formats?: ReportFormat[];
}

/** Parses "html,md,png,json" (the CLI's --format) into formats; unknown names are a ConfigError. */
export function parseFormats(input: string | string[]): ReportFormat[] {
  const names = (Array.isArray(input) ? input : [input])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = names.filter((n) => !(REPORT_FORMATS as readonly string[]).includes(n));
  if (bad.length > 0) {
    throw new ConfigError(`--format: unknown report format ${bad.map((b) => JSON.stringify(b)).join(', ')}; use some of ${REPORT_FORMATS.join(',')}`);
  }
  if (names.length === 0) throw new ConfigError(`--format must name at least one of ${REPORT_FORMATS.join(',')}`);
  return [...new Set(names as ReportFormat[])];
}

export function defaultCompareDir(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return path.resolve('reports', `compare-${stamp}`);
}

/** report.json: what the report derived — table, verdict, latency, rejections, deltas — not the samples. */
export function reportJson(data: ReportData): unknown {
  return {
    runs: data.runs.map((r) => ({
      label: r.label,
      dir: r.dir,
      status: r.status,
      scenario: r.scenarioName,
      verdict: r.verdict,
      rows: r.rows,
      latency: r.latency,
      rejections: r.rejections,
      warnings: r.warnings,
    })),
    comparison: data.comparison,
  };
}

export async function renderReports(runDirs: string | string[], opts: RenderOptions = {}): Promise<{ files: string[] }> {
  const dirs = Array.isArray(runDirs) ? runDirs : [runDirs];
  if (dirs.length === 0) throw new ConfigError('report: name at least one run folder');
  const formats = opts.formats ? parseFormats(opts.formats) : [...REPORT_FORMATS];

  const runs = [];
  for (const dir of dirs) runs.push(await loadRun(dir));
  const outDir = path.resolve(opts.outDir ?? (runs.length === 1 ? runs[0]!.dir : defaultCompareDir()));

  const data = deriveReport(runs);
  const charts = buildChartSpecs(data);
  const files: string[] = [];
  const write = async (name: string, content: string | Buffer) => {
    const file = path.join(outDir, name);
    try {
      await writeFile(file, content);
    } catch (err) {
      throw new AttestormError('ATTESTORM_ERR_IO', `cannot write ${file}: ${(err as Error).message}`, { cause: err });
    }
    files.push(file);
  };
  try {
    await mkdir(outDir, { recursive: true });
  } catch (err) {
    throw new AttestormError('ATTESTORM_ERR_IO', `cannot create report folder ${outDir}: ${(err as Error).message}`, { cause: err });
  }

  const pngs: { id: string; title: string; file: string }[] = [];
  if (formats.includes('png')) {
    for (const spec of charts) {
      await write(`${spec.id}.png`, await renderPng(spec));
      pngs.push({ id: spec.id, title: spec.title, file: `${spec.id}.png` });
    }
  }
  if (formats.includes('html')) await write('report.html', renderHtml(data, charts, opts.extraSections ?? []));
  if (formats.includes('md')) await write('summary.md', renderMarkdown(data, pngs, opts.extraSections ?? []));
  if (formats.includes('json')) await write('report.json', `${JSON.stringify(reportJson(data), null, 2)}\n`);
  return { files };
}

/** A run folder's time charts as Mermaid blocks with their sentences (the job summary's charts), from the same derivation as every report. */
export async function mermaidChartsOf(runDir: string, opts: MermaidOptions = {}): Promise<string[]> {
  return renderMermaidCharts(deriveReport([await loadRun(runDir)]), opts);
}
