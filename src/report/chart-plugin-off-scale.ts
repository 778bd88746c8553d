// The Chart.js plugin that writes each off-scale mark's value beside its ▲ (datasets made by
// offScaleDataset). One source for both renderers: the page inlines the text, the PNG renderer
// evaluates the same text, so the label looks the same in report.html and in the PNGs.
import { runInThisContext } from 'node:vm';
import type { Plugin } from 'chart.js';

/** A plain-JavaScript expression evaluating to the plugin; no closure over anything but Chart.js' arguments. */
export const OFF_SCALE_LABELS_SOURCE = `({
  id: 'attestormOffScaleLabels',
  afterDatasetsDraw: function (chart) {
    var ctx = chart.ctx;
    var area = chart.chartArea;
    var font = chart.options.font || {};
    var size = font.size || 12;
    // Labels go just under the top edge, beside their mark; one that would cover another moves a line down.
    var placed = [];
    ctx.save();
    ctx.font = 'bold ' + size + 'px ' + (font.family || 'sans-serif');
    ctx.textBaseline = 'top';
    chart.data.datasets.forEach(function (ds, i) {
      if (!Array.isArray(ds.offScaleLabels) || !chart.isDatasetVisible(i)) return;
      ctx.fillStyle = ds.borderColor;
      chart.getDatasetMeta(i).data.forEach(function (el, j) {
        var text = ds.offScaleLabels[j];
        // A mark panned or zoomed out of view takes its label with it.
        if (typeof text !== 'string' || el.x < area.left - 1 || el.x > area.right + 1) return;
        var width = ctx.measureText(text).width;
        var left = el.x + 8 + width <= area.right ? el.x + 8 : el.x - 8 - width;
        var top = area.top + 4;
        var clash = function (b) { return left < b.right && left + width > b.left && top < b.bottom && top + size > b.top; };
        while (placed.some(clash)) top += size + 2;
        placed.push({ left: left, right: left + width, top: top, bottom: top + size });
        ctx.fillText(text, left, top);
      });
    });
    ctx.restore();
  }
})`;

let plugin: Plugin | null = null;

/** The plugin for Chart.js in Node (the PNG renderer). */
export function offScaleLabels(): Plugin {
  plugin ??= runInThisContext(OFF_SCALE_LABELS_SOURCE, { filename: 'chart-plugin-off-scale.js' }) as Plugin;
  return plugin;
}
