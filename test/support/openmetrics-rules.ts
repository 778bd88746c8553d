// The rules of the OpenMetrics 1.0 text format that can be checked without promtool: every line a
// TYPE, UNIT or HELP line or a sample; names and label names well formed; label values escaped; a
// family's metadata before its samples and its samples together (never resumed after another
// family); a UNIT the family name ends with; gauge samples named as the family, counter samples
// `_total`; each series' samples together, timestamps increasing; `# EOF` last. Returns what was
// read, or throws naming the rule and the line.

export interface OmSample {
  family: string;
  name: string;
  labels: Record<string, string>;
  value: number;
  timestamp: number;
}

export interface OmFamily {
  name: string;
  type: string;
  unit: string | null;
  help: string | null;
  samples: OmSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const FLOAT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$|^[+-]?Inf$|^NaN$/;

/** `a="x",b="y\"z"` → { a: 'x', b: 'y"z' }; only \\, \" and \n escapes are legal. */
function parseLabels(text: string, fail: (rule: string) => never): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) fail('a label is name="value"');
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) fail(`label name ${JSON.stringify(name)}`);
    if (name in labels) fail(`label ${name} twice`);
    if (text[eq + 1] !== '"') fail('a label value is quoted');
    let value = '';
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        const next = text[++j];
        if (next === '\\') value += '\\';
        else if (next === '"') value += '"';
        else if (next === 'n') value += '\n';
        else fail(`escape \\${next ?? ''} in a label value`);
      } else if (text[j] === '\n') fail('a raw line break in a label value');
      else value += text[j];
    }
    if (text[j] !== '"') fail('a label value is closed');
    labels[name] = value;
    i = j + 1;
    if (i < text.length) {
      if (text[i] !== ',') fail('labels are separated by commas');
      i++;
    }
  }
  return labels;
}

export function parseOpenMetrics(text: string): OmFamily[] {
  if (!text.endsWith('# EOF\n') && !text.endsWith('# EOF')) throw new Error('openmetrics: the exposition ends with # EOF');
  const lines = text.replace(/\n$/, '').split('\n');
  if (lines.pop() !== '# EOF') throw new Error('openmetrics: # EOF is the last line');
  const families: OmFamily[] = [];
  const closed = new Set<string>();
  let current = null as OmFamily | null;
  let lastSeries: string | null = null;
  const seriesSeen = new Set<string>();
  const lastTs = new Map<string, number>();
  for (const [n, line] of lines.entries()) {
    const fail = (rule: string): never => {
      throw new Error(`openmetrics line ${n + 1}: ${rule}: ${JSON.stringify(line)}`);
    };
    if (line.includes('# EOF')) fail('# EOF only at the end');
    const meta = /^# (TYPE|UNIT|HELP) (\S+)(?: (.*))?$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta;
      if (!NAME.test(name!)) fail('metric name');
      let fam: OmFamily;
      if (current === null || current.name !== name) {
        if (current !== null) {
          if (current.samples.length === 0) fail(`family ${current.name} has no sample`);
          closed.add(current.name);
        }
        if (closed.has(name!)) fail(`family ${name} resumed after another family`);
        fam = { name: name!, type: 'unknown', unit: null, help: null, samples: [] };
        families.push(fam);
        current = fam;
        lastSeries = null;
      } else {
        fam = current;
        if (fam.samples.length > 0) fail('metadata after the family’s samples');
      }
      if (kind === 'TYPE') {
        if (!['gauge', 'counter', 'stateset', 'info', 'histogram', 'gaugehistogram', 'summary', 'unknown'].includes(rest ?? '')) fail('metric type');
        fam.type = rest!;
      } else if (kind === 'UNIT') {
        if (!rest || !NAME.test(rest)) fail('unit');
        if (!name!.endsWith(`_${rest}`)) fail(`a family with unit ${rest} is named …_${rest}`);
        fam.unit = rest!;
      } else {
        if (/\\[^\\n]/.test(rest ?? '')) fail('HELP escapes only \\\\ and \\n');
        fam.help = rest ?? '';
      }
      continue;
    }
    if (line.startsWith('#')) fail('a comment other than TYPE, UNIT, HELP or EOF');
    const m = /^([^{\s]+)(?:\{(.*)\})? (\S+)(?: (\S+))?$/.exec(line) ?? fail('a sample is name{labels} value [timestamp]');
    const [, name, labelText, value, timestamp] = m;
    if (!NAME.test(name!)) fail('metric name');
    if (!current) fail('a sample before its family’s TYPE');
    const suffixes =
      current!.type === 'counter' ? ['_total', '_created'] : current!.type === 'gauge' ? [''] : ['', '_total', '_created', '_count', '_sum', '_bucket'];
    if (!suffixes.some((s) => `${current!.name}${s}` === name)) fail(`sample ${name} does not belong to family ${current!.name} (${current!.type})`);
    if (!FLOAT.test(value!)) fail('value is a number');
    if (timestamp === undefined || !FLOAT.test(timestamp)) fail('timestamp is a number (seconds)');
    const labels = parseLabels(labelText ?? '', fail);
    const key = `${name}{${Object.entries(labels)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(',')}}`;
    if (key !== lastSeries) {
      if (seriesSeen.has(key)) fail(`the samples of ${key} are not together`);
      seriesSeen.add(key);
      lastSeries = key;
    }
    const ts = Number(timestamp);
    if (lastTs.has(key) && !(ts > lastTs.get(key)!)) fail('timestamps increase within a series');
    lastTs.set(key, ts);
    current!.samples.push({ family: current!.name, name: name!, labels, value: Number(value), timestamp: ts });
  }
  if (current && current.samples.length === 0) throw new Error(`openmetrics: family ${current.name} has no sample`);
  return families;
}
