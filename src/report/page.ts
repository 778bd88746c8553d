// The shell every self-contained page shares (run report, history, sweep): a CSP that forbids any
// request, the page's CSS, the body, the data as JSON in a script element, and Chart.js (with its zoom
// plugin, where a page asks for it) inlined.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { escapeHtml, jsonForScript, scriptForInline } from './html-escape.js';
import { PAGE_CSS } from './html-assets.js';

// No default-src: nothing may be fetched — no fonts, images, scripts or connections from anywhere.
export const PAGE_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

let chartJsSource: string | null = null;

/** The UMD build of the installed Chart.js (not an export of the package, so found next to its entry). */
export function chartJs(): string {
  if (chartJsSource === null) {
    const entry = createRequire(import.meta.url).resolve('chart.js');
    chartJsSource = scriptForInline(readFileSync(path.join(path.dirname(entry), 'chart.umd.min.js'), 'utf8'));
  }
  return chartJsSource;
}

let zoomSource: string | null = null;

/**
 * chartjs-plugin-zoom's UMD build, with Hammer.js before it (the plugin's pan and pinch need it): it
 * registers itself with the global Chart. Both are read from the installed packages, like Chart.js.
 */
export function chartZoomJs(): string {
  if (zoomSource === null) {
    const require = createRequire(import.meta.url);
    const hammer = readFileSync(path.join(path.dirname(require.resolve('hammerjs')), 'hammer.min.js'), 'utf8');
    const zoom = readFileSync(path.join(path.dirname(require.resolve('chartjs-plugin-zoom')), 'chartjs-plugin-zoom.min.js'), 'utf8');
    zoomSource = scriptForInline(`${hammer}\n${zoom}`);
  }
  return zoomSource;
}

export interface PageParts {
  title: string;
  /** HTML inside <main>, already escaped. */
  body: string;
  /** id of the JSON data element and its content. */
  data: { id: string; value: unknown };
  /** The page's own script, run after Chart.js. */
  script: string;
  /** Inline chartjs-plugin-zoom (and Hammer.js) after Chart.js. */
  zoom?: boolean;
}

export function selfContainedPage(p: PageParts): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(PAGE_CSP)}">
<title>${escapeHtml(p.title)}</title>
<style>${PAGE_CSS}</style>
</head>
<body>
<main>
${p.body}
</main>
<script type="application/json" id="${escapeHtml(p.data.id)}">${jsonForScript(p.data.value)}</script>
<script>${chartJs()}</script>
${p.zoom ? `<script>${chartZoomJs()}</script>\n` : ''}<script>${p.script}</script>
</body>
</html>
`;
}
