// PNG charts rendered in Node: the same Chart.js definitions as the HTML page, drawn on an
// @napi-rs/canvas canvas at a fixed size, on white, with labels large enough to read at 1200×600.
import { createCanvas, type SKRSContext2D } from '@napi-rs/canvas';
import { Chart, registerables, type ChartConfiguration, type Plugin } from 'chart.js';
import type { ChartSpec } from './chart-kit.js';
import { offScaleLabels } from './chart-plugin-off-scale.js';

export const PNG_WIDTH = 1200;
export const PNG_HEIGHT = 600;

let registered = false;
function setUp(): void {
  if (registered) return;
  Chart.register(...registerables);
  // Chart.js' 12 px default is for screens; a 1200 px image pasted in a PR needs larger text.
  Chart.defaults.font.size = 16;
  Chart.defaults.font.family = '"Liberation Sans", "DejaVu Sans", Arial, sans-serif';
  Chart.defaults.color = '#333';
  registered = true;
}

/** A transparent PNG renders black or checkered in many viewers; paint white under the chart. */
const whiteBackground: Plugin = {
  id: 'attestorm-white-background',
  beforeDraw(chart) {
    // Chart.js types its context as the DOM's, which Node's types lack; here it is @napi-rs/canvas's.
    const ctx = chart.ctx as unknown as SKRSContext2D;
    ctx.save();
    ctx.globalCompositeOperation = 'destination-over';
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, chart.width, chart.height);
    ctx.restore();
  },
};

export async function renderPng(spec: ChartSpec): Promise<Buffer> {
  setUp();
  const canvas = createCanvas(PNG_WIDTH, PNG_HEIGHT);
  // Copy: Chart.js mutates the config it is given, and the same spec also goes into the HTML.
  const config = structuredClone(spec.config) as ChartConfiguration;
  config.options = { ...config.options, responsive: false, animation: false, devicePixelRatio: 1 };
  config.plugins = [...(config.plugins ?? []), whiteBackground, offScaleLabels()];
  // Chart.js accepts any object with the 2d-context API; @napi-rs/canvas provides one.
  const chart = new Chart(canvas.getContext('2d') as unknown as ConstructorParameters<typeof Chart>[0], config);
  try {
    return await canvas.encode('png');
  } finally {
    chart.destroy();
  }
}
