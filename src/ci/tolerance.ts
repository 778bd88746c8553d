// --tolerance: how far a figure may move against its baseline before the gate calls it a regression.
// "10%" sets every relative figure; "peakMemory=5%,oomKills=1" sets single figures.
import { ConfigError } from '../errors.js';
import { FIGURES, FIGURE_IDS, figureDef, type FigureId } from './figures.js';

export interface Tolerances {
  /** Per figure: a fraction for relative and points figures (0.1 = 10% / 10 points), a count otherwise. */
  byFigure: Record<FigureId, number>;
  /** The text each tolerance came from, for tables ("10%", "0", "1 pt"). */
  text: Record<FigureId, string>;
}

export const DEFAULT_RELATIVE = 0.1;
export const DEFAULT_POINTS = 0.01;
export const DEFAULT_COUNT = 0;

export const TOLERANCE_HELP =
  'A percentage for every relative figure ("10%", the default), and/or figure=value pairs: ' +
  `${FIGURES.map((f) => `${f.id}=${f.kind === 'count' ? 'N' : 'P%'}`).join(', ')}. ` +
  'OOM kills and restarts compare as absolute counts (default 0); bystanderSuccess in percentage points (default 1%).';

function defaults(): Tolerances {
  const byFigure = {} as Record<FigureId, number>;
  const text = {} as Record<FigureId, string>;
  for (const f of FIGURES) {
    const value = f.kind === 'relative' ? DEFAULT_RELATIVE : f.kind === 'points' ? DEFAULT_POINTS : DEFAULT_COUNT;
    byFigure[f.id] = value;
    text[f.id] = toleranceText(f.id, value);
  }
  return { byFigure, text };
}

export function toleranceText(id: FigureId, value: number): string {
  const kind = figureDef(id).kind;
  if (kind === 'count') return `±${value}`;
  const pct = `${+(value * 100).toFixed(3)}`;
  return kind === 'points' ? `${pct} pt` : `${pct}%`;
}

const PERCENT_RE = /^(\d+(?:\.\d+)?)%$/;
const COUNT_RE = /^\d+$/;

/** Parses every --tolerance given (repeatable, comma-separated). Bad input is a ConfigError naming the flag. */
export function parseTolerances(input: string | string[] | undefined): Tolerances {
  const t = defaults();
  const items = (input === undefined ? [] : Array.isArray(input) ? input : [input])
    .flatMap((s) => String(s).split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  const problems: string[] = [];
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq < 0) {
      const m = PERCENT_RE.exec(item);
      if (!m) {
        problems.push(`--tolerance ${JSON.stringify(item)}: a bare tolerance must be a percentage like 10% (or name a figure: peakMemory=5%)`);
        continue;
      }
      const value = Number(m[1]) / 100;
      for (const f of FIGURES) {
        if (f.kind !== 'relative') continue;
        t.byFigure[f.id] = value;
        t.text[f.id] = toleranceText(f.id, value);
      }
      continue;
    }
    const name = item.slice(0, eq).trim();
    const raw = item.slice(eq + 1).trim();
    if (!(FIGURE_IDS as readonly string[]).includes(name)) {
      problems.push(`--tolerance ${JSON.stringify(item)}: unknown figure ${JSON.stringify(name)}; use one of ${FIGURE_IDS.join(', ')}`);
      continue;
    }
    const def = figureDef(name as FigureId);
    if (def.kind === 'count') {
      if (!COUNT_RE.test(raw)) {
        problems.push(`--tolerance ${JSON.stringify(item)}: ${name} is a count compared absolutely; give a whole number of ${def.unit} like ${name}=1`);
        continue;
      }
      t.byFigure[def.id] = Number(raw);
    } else {
      const m = PERCENT_RE.exec(raw);
      if (!m) {
        problems.push(`--tolerance ${JSON.stringify(item)}: ${name} takes a percentage like ${name}=5%`);
        continue;
      }
      t.byFigure[def.id] = Number(m[1]) / 100;
    }
    t.text[def.id] = toleranceText(def.id, t.byFigure[def.id]);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return t;
}
