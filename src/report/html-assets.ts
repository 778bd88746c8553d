// The page's own CSS and the small browser script that turns the embedded chart definitions into
// Chart.js charts. Kept apart from the page template so each stays readable.
import { OFF_SCALE_LABELS_SOURCE } from './chart-plugin-off-scale.js';

/** The shared time cursor's colour (the browser test looks for it on the canvases). */
export const TIME_CURSOR_COLOR = '#444444';

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
.verdict.compared { border-color: #5b6b7a; background: #f4f6f8; }
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
figure.time-chart { position: relative; }
button.zoom-reset { position: absolute; top: .4rem; right: .4rem; z-index: 1; font: inherit; font-size: .8rem; padding: .1rem .5rem; border: 1px solid var(--line); border-radius: 4px; background: #fff; color: var(--fg); cursor: pointer; }
button.zoom-reset:disabled { color: var(--muted); cursor: default; opacity: .6; }
.chart-hint { color: var(--muted); font-size: .9rem; }
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
 * Runs in the page after Chart.js and chartjs-plugin-zoom: reads the chart definitions from the JSON
 * element, adds the browser-only options (responsive sizing, unit-aware tooltips) and draws each
 * chart. The time charts zoom and pan together (one x range for all, one reset) and share a time
 * cursor: hovering one draws the same instant on every other.
 */
export const PAGE_SCRIPT = `
(function () {
  var el = document.getElementById('attestorm-charts');
  if (!el || typeof Chart === 'undefined') return;
  var specs = JSON.parse(el.textContent);
  var timeCharts = [];
  var resets = [];
  var syncing = false;

  function refreshResets() {
    var zoomed = timeCharts.some(function (c) { return typeof c.isZoomedOrPanned === 'function' && c.isZoomedOrPanned(); });
    resets.forEach(function (b) { b.disabled = !zoomed; });
  }
  // One chart zoomed or panned: every other time chart takes the same x range.
  function syncRange(source) {
    if (syncing) return;
    syncing = true;
    var range = { min: source.scales.x.min, max: source.scales.x.max };
    timeCharts.forEach(function (c) { if (c !== source) c.zoomScale('x', range, 'none'); });
    syncing = false;
    refreshResets();
  }
  function resetAll() {
    timeCharts.forEach(function (c) { c.resetZoom('none'); });
    refreshResets();
  }

  // The shared cursor: the instant under the pointer (seconds), drawn on every time chart.
  function setCursor(x, source) {
    timeCharts.forEach(function (c) {
      if (c.$timeCursor === x) return;
      c.$timeCursor = x;
      if (c !== source) c.draw();
    });
  }
  var timeCursor = {
    id: 'attestormTimeCursor',
    afterEvent: function (chart, args) {
      var e = args.event;
      var a = chart.chartArea;
      var inside = e.x >= a.left && e.x <= a.right && e.y >= a.top && e.y <= a.bottom;
      var x = e.type !== 'mouseout' && inside ? chart.scales.x.getValueForPixel(e.x) : null;
      if (x === chart.$timeCursor) return;
      setCursor(x, chart);
      args.changed = true;
    },
    afterDatasetsDraw: function (chart) {
      var x = chart.$timeCursor;
      if (typeof x !== 'number') return;
      var a = chart.chartArea;
      var px = chart.scales.x.getPixelForValue(x);
      if (px < a.left || px > a.right) return;
      var ctx = chart.ctx;
      ctx.save();
      ctx.strokeStyle = '${TIME_CURSOR_COLOR}';
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(px, a.top);
      ctx.lineTo(px, a.bottom);
      ctx.stroke();
      ctx.fillStyle = '${TIME_CURSOR_COLOR}';
      ctx.font = '11px sans-serif';
      ctx.textBaseline = 'bottom';
      ctx.textAlign = px + 60 > a.right ? 'right' : 'left';
      ctx.fillText(x.toFixed(1) + ' s', px + (ctx.textAlign === 'left' ? 3 : -3), a.bottom - 2);
      ctx.restore();
    }
  };
  Chart.register(${OFF_SCALE_LABELS_SOURCE});

  var canZoom = typeof Chart.registry.plugins.get('zoom') !== 'undefined';
  var hasHammer = typeof Hammer !== 'undefined';
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
          var off = item.dataset.offScale;
          var v = Array.isArray(off) ? off[item.dataIndex] : item.parsed && typeof item.parsed.y === 'number' ? item.parsed.y : item.raw;
          var text = typeof v === 'number' ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2)) : String(v);
          return item.dataset.label + ': ' + text + ' ' + spec.unit;
        }
      }
    };
    if (spec.time) {
      config.plugins = [timeCursor];
      if (canZoom) {
        config.options.plugins.zoom = {
          limits: { x: { min: 'original', max: 'original', minRange: 1 } },
          pan: { enabled: true, mode: 'x', onPan: function (ctx) { syncRange(ctx.chart); }, onPanComplete: refreshResets },
          zoom: {
            mode: 'x',
            wheel: { enabled: true, modifierKey: 'ctrl' },
            pinch: { enabled: true },
            drag: { enabled: true, modifierKey: 'shift', backgroundColor: 'rgba(0, 114, 178, 0.15)' },
            // onZoom, not onZoomComplete: the plugin calls that one a quarter second after the wheel stops.
            onZoom: function (ctx) { syncRange(ctx.chart); },
            onZoomComplete: refreshResets
          }
        };
      }
    }
    // The plugin gives every chart a Hammer manager as the chart is made. The time charts pan and zoom
    // along x only: a vertical swipe over one still scrolls the page on a phone.
    if (hasHammer) Hammer.defaults.touchAction = spec.time ? 'pan-y' : 'compute';
    var chart = new Chart(canvas, config);
    if (spec.time) {
      chart.$timeCursor = null;
      timeCharts.push(chart);
      var figure = canvas.closest('figure');
      if (canZoom && figure) {
        var button = document.createElement('button');
        button.type = 'button';
        button.className = 'zoom-reset';
        button.textContent = 'Reset zoom';
        button.disabled = true;
        button.addEventListener('click', resetAll);
        figure.insertBefore(button, figure.firstChild);
        resets.push(button);
      }
    }
  });
  var note = document.getElementById('charts-need-js');
  if (note) {
    if (canZoom && timeCharts.length > 0) {
      var hint = document.createElement('p');
      hint.className = 'chart-hint';
      hint.id = 'chart-hint';
      hint.textContent = 'Time charts: drag to pan, Ctrl + wheel or pinch to zoom, Shift + drag to zoom into a span; they move together, and the time under the pointer is marked on each.';
      note.parentNode.insertBefore(hint, note);
    }
    note.remove();
  }
})();
`;
