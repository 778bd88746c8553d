// Inspection rules for the Mermaid `xychart-beta` blocks attestorm writes (no Mermaid parser runs in
// Node without a browser): an optional init directive whose JSON parses, the header, a quoted title,
// a numeric x range, a y range, and `line [..]` arrays of numbers only, all of one length. Returns
// what was read, or throws naming the rule and the line.

export interface XyChart {
  title: string;
  x: { title: string; min: number; max: number };
  y: { title: string; min: number; max: number };
  lines: number[][];
  palette: string[] | null;
}

const NUMBER = '-?(?:\\d+(?:\\.\\d+)?|\\.\\d+)';
const STRING = '"([^"]*)"';

/** Every ```mermaid … ``` block of a Markdown text, as its inner lines. */
export function mermaidBlocks(markdown: string): string[][] {
  const blocks: string[][] = [];
  let open: string[] | null = null;
  for (const line of markdown.split('\n')) {
    if (open === null && line.trim() === '```mermaid') open = [];
    else if (open !== null && line.trim() === '```') {
      blocks.push(open);
      open = null;
    } else if (open !== null) open.push(line);
  }
  if (open !== null) throw new Error('a ```mermaid block is not closed');
  return blocks;
}

export function parseXyChart(block: string[]): XyChart {
  const lines = block.map((l) => l.trim()).filter((l) => l !== '');
  const fail = (rule: string, line?: string): never => {
    throw new Error(`xychart-beta: ${rule}${line !== undefined ? `: ${JSON.stringify(line)}` : ''}`);
  };
  let palette: string[] | null = null;
  if (lines[0]?.startsWith('%%{')) {
    const m = /^%%\{init: (.*)\}%%$/.exec(lines[0]);
    if (!m) fail('an init directive is %%{init: {…}}%%', lines[0]);
    const init = JSON.parse(m![1]!) as { themeVariables?: { xyChart?: { plotColorPalette?: string } } };
    const p = init.themeVariables?.xyChart?.plotColorPalette;
    if (p !== undefined) {
      palette = p.split(',').map((c) => c.trim());
      for (const c of palette) if (!/^#[0-9A-Fa-f]{6}$/.test(c)) fail('palette colours are #rrggbb', c);
    }
    lines.shift();
  }
  if (lines.shift() !== 'xychart-beta') fail('the first line is xychart-beta');
  const title = new RegExp(`^title ${STRING}$`).exec(lines.shift() ?? '') ?? fail('then a quoted title');
  const range = (axis: string) => {
    const line = lines.shift() ?? '';
    const m = new RegExp(`^${axis} ${STRING} (${NUMBER}) --> (${NUMBER})$`).exec(line) ?? fail(`then ${axis} "title" min --> max`, line);
    const [min, max] = [Number(m[2]), Number(m[3])];
    if (!(min < max)) fail(`${axis} min below max`, line);
    return { title: m[1]!, min, max };
  };
  const x = range('x-axis');
  const y = range('y-axis');
  const series = lines.map((line) => {
    const m = /^line \[(.*)\]$/.exec(line) ?? fail('then only line [..] series', line);
    const values = m[1]!.split(',').map((v) => v.trim());
    for (const v of values) if (!new RegExp(`^${NUMBER}$`).test(v)) fail('a series holds numbers only', v);
    return values.map(Number);
  });
  if (series.length === 0) fail('at least one line');
  if (new Set(series.map((s) => s.length)).size !== 1) fail(`every line as long as the others, got ${series.map((s) => s.length).join(', ')}`);
  if (palette !== null && palette.length < series.length) fail(`a palette colour per line: ${palette.length} for ${series.length}`);
  return { title: title[1]!, x, y, lines: series, palette };
}
