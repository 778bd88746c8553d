// A small parser for the Prometheus text exposition format: enough to read the reference agent's
// /metrics without a client library, and tolerant of anything else an exporter may print.

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  return Number(text);
}

/** Parses `name{a="x",b="y\"z"} 12.5 [ts]` lines; comments, blanks and malformed lines are skipped. */
export function parsePrometheusText(text: string): PromSample[] {
  const out: PromSample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const nameMatch = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (!nameMatch) continue;
    const name = nameMatch[0];
    let i = name.length;
    const labels: Record<string, string> = {};
    if (line[i] === '{') {
      i++;
      let ok = false;
      while (i < line.length) {
        while (line[i] === ' ' || line[i] === ',') i++;
        if (line[i] === '}') {
          i++;
          ok = true;
          break;
        }
        const key = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
        if (!key || line[i + key[0].length] !== '=' || line[i + key[0].length + 1] !== '"') break;
        i += key[0].length + 2;
        let value = '';
        while (i < line.length && line[i] !== '"') {
          if (line[i] === '\\' && i + 1 < line.length) {
            const next = line[i + 1];
            value += next === 'n' ? '\n' : next;
            i += 2;
          } else {
            value += line[i++];
          }
        }
        if (line[i] !== '"') break;
        i++;
        labels[key[0]] = value;
      }
      if (!ok) continue;
    }
    const rest = line.slice(i).trim().split(/\s+/);
    if (!rest[0]) continue;
    const value = parseValue(rest[0]);
    if (Number.isNaN(value) && rest[0] !== 'NaN') continue;
    out.push({ name, labels, value });
  }
  return out;
}

/** Sum of every series of `name` whose labels include `match`; null when the metric is absent. */
export function sumMetric(samples: readonly PromSample[], name: string, match: Record<string, string> = {}): number | null {
  let found = false;
  let total = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (!Object.entries(match).every(([k, v]) => s.labels[k] === v)) continue;
    found = true;
    total += s.value;
  }
  return found ? total : null;
}

/** Sums of `name` grouped by one label's value. */
export function sumByLabel(samples: readonly PromSample[], name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) {
    if (s.name !== name) continue;
    const key = s.labels[label] ?? '';
    out[key] = (out[key] ?? 0) + s.value;
  }
  return out;
}
