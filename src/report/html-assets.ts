// The page's own CSS and the small browser script that turns the embedded chart definitions into
// Chart.js charts. Kept apart from the page template so each stays readable.

export const PAGE_CSS = `
:root { color-scheme: light; --fg: #1d1d1f; --muted: #5f6368; --line: #d9d9de; --ok: #0a7d32; --bad: #b3261e; }
* { box-sizing: border-box; }
body { margin: 0; overflow-wrap: break-word; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Liberation Sans", "DejaVu Sans", sans-serif; color: var(--fg); background: #fff; }
main { max-width: 1440px; margin: 0 auto; padding: 1rem 1.25rem 3rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 .25rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .5rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .5rem; }
.meta { color: var(--muted); margin: 0 0 1rem; }
.verdict { border-left: 6px solid var(--ok); background: #f3faf5; padding: .75rem 1rem; margin: 1rem 0; font-size: 1.05rem; }
.verdict.failed { border-color: var(--bad); background: #fdf3f2; }
.verdict.inconclusive { border-color: #b26a00; background: #fff8ec; }
tr.inconclusive > :first-child { box-shadow: inset 4px 0 0 #b26a00; padding-left: .9rem; }
li.inconclusive { color: #8a5300; }
.table-wrap { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid var(--line); padding: .4rem .6rem; text-align: left; vertical-align: top; }
thead th { background: #f6f6f8; font-weight: 600; vertical-align: bottom; }
tbody th { font-weight: 600; white-space: nowrap; }
/* On a narrow screen the table scrolls sideways; the variant column stays in view. */
tbody th { position: sticky; left: 0; background: #fff; z-index: 1; }
thead th:first-child { position: sticky; left: 0; z-index: 2; }
td.num { text-align: right; white-space: nowrap; }
td.nowrap { white-space: nowrap; }
thead th.group { text-align: center; border-bottom-color: #b8b8c0; font-weight: 600; }
tr.failed > :first-child { box-shadow: inset 4px 0 0 var(--bad); padding-left: .9rem; }
tr.passed > :first-child { box-shadow: inset 4px 0 0 var(--ok); padding-left: .9rem; }
ul.expect { margin: .75rem 0; padding-left: 0; list-style: none; }
ul.expect li { margin: .2rem 0; padding-left: 1.2rem; text-indent: -1.2rem; }
li.pass { color: var(--ok); } li.fail { color: var(--bad); }
ul.expect strong, ul.expect code { color: var(--fg); }
details.more { margin: .5rem 0 1rem; }
details.more > summary { cursor: pointer; color: var(--muted); }
details.more[open] > summary { margin-bottom: .5rem; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 560px), 1fr)); gap: 1.25rem; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: .75rem; }
.chart-box { position: relative; height: 360px; }
figcaption { color: var(--muted); font-size: .9rem; margin-top: .5rem; }
/* Long lines (a scenario's description, a command) wrap instead of widening the box. */
pre { background: #f6f6f8; border: 1px solid var(--line); padding: .75rem; overflow-x: auto; font-size: .85rem; white-space: pre-wrap; overflow-wrap: anywhere; }
dl.env { display: grid; grid-template-columns: minmax(0, max-content) minmax(0, 1fr); gap: .2rem 1rem; }
dl.env dt { color: var(--muted); } dl.env dd { margin: 0; overflow-wrap: anywhere; }
.warn { color: var(--bad); }
@media (max-width: 640px) {
  main { padding: .5rem .6rem 2rem; }
  .chart-box { height: 280px; }
  th, td { padding: .3rem .4rem; font-size: .85rem; }
  /* A phone shows each row of a report table as a card: one line per column, its header beside it. */
  table.cards thead { display: none; }
  table.cards, table.cards tbody, table.cards tr { display: block; width: 100%; }
  table.cards tr { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 .75rem; padding: .25rem 0; }
  table.cards tbody th, table.cards td { display: grid; grid-template-columns: minmax(0, 11rem) minmax(0, 1fr); gap: .75rem; position: static; border-bottom: 0; text-align: left; white-space: normal; overflow-wrap: anywhere; }
  table.cards tbody th::before, table.cards td::before { content: attr(data-label); color: var(--muted); font-weight: 400; }
  table.cards tbody th { font-size: .95rem; border-bottom: 1px solid var(--line); }
}
`;

/**
 * Runs in the page after Chart.js: reads the chart definitions from the JSON element, adds the
 * browser-only options (responsive sizing, unit-aware tooltips) and draws each chart.
 */
export const PAGE_SCRIPT = `
(function () {
  var el = document.getElementById('attestorm-charts');
  if (!el || typeof Chart === 'undefined') return;
  var specs = JSON.parse(el.textContent);
  specs.forEach(function (spec) {
    var canvas = document.getElementById('chart-' + spec.id);
    if (!canvas) return;
    var config = spec.config;
    config.options = config.options || {};
    config.options.responsive = true;
    config.options.maintainAspectRatio = false;
    config.options.animation = false;
    config.options.plugins = config.options.plugins || {};
    config.options.plugins.tooltip = {
      callbacks: {
        label: function (item) {
          if (typeof item.dataset.offScaleMiB === 'number') return item.dataset.label + ': ' + item.dataset.offScaleMiB.toFixed(0) + ' MiB';
          var v = item.parsed && typeof item.parsed.y === 'number' ? item.parsed.y : item.raw;
          var text = typeof v === 'number' ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2)) : String(v);
          return item.dataset.label + ': ' + text + ' ' + spec.unit;
        }
      }
    };
    new Chart(canvas, config);
  });
  var note = document.getElementById('charts-need-js');
  if (note) note.remove();
})();
`;
