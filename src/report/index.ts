// Reports from run folders: self-contained HTML, Markdown summary, PNG charts and derived JSON.
export { renderReports, parseFormats, defaultCompareDir, mermaidChartsOf, type RenderOptions, type ExtraSection } from './render-reports.js';
export { renderMermaidCharts, MERMAID_MAX_POINTS, MERMAID_CHARTS, type MermaidChart, type MermaidOptions } from './render-mermaid.js';
export { loadRun, parseSamples, type LoadedRun } from './load-run.js';
export { deriveReport, deriveRun } from './derive.js';
export { FIELD_RATIOS } from './derive-table.js';
// Page parts other self-contained pages reuse (the CI history report).
export { chartJs } from './page.js';
export { escapeHtml, jsonForScript } from './html-escape.js';
export { PAGE_CSS } from './html-assets.js';
export { selfContainedPage, PAGE_CSP, type PageParts } from './page.js';
export { buildChartSpecs } from './chart-configs.js';
export { variantPalette, type ChartSpec, type ChartId } from './chart-kit.js';
export { PNG_WIDTH, PNG_HEIGHT } from './render-png.js';
export * from './report-model.js';
export { findIncompleteRuns, markIncomplete } from './mark-incomplete.js';
