// `attestorm sweep`: the scenario once per value of one key, every variant at each value, or a
// bisection of a numeric key for the value where a variant starts being OOM-killed. Each value is a
// full run folder; sweep.json is rewritten after every point.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { Progress, selectVariants, stormLoadDriver, type LoadedScenario } from '../scenario/index.js';
import { runScenario } from '../runner/index.js';
import { localPlatform, type Platform } from '../platform/index.js';
import { boundaries, pointsOf, sweepOrder, SWEEP_SCHEMA_VERSION, type SweepPoint, type SweepResult } from './sweep-result.js';
import { numericValue, scenarioWith, type Vary } from './vary.js';

export interface SweepOptions {
  base: LoadedScenario;
  vary: Vary;
  outDir: string;
  variants?: string[];
  /** Bisect `vary.key` between two values for each variant's OOM boundary. */
  findOom?: { low: string; high: string; resolution: number };
  /** Progress lines (default stderr). */
  log?: (line: string) => void;
  signal?: AbortSignal;
  /** Where every run goes. Default: this machine. */
  platform?: Platform;
  /** Every column of each run's closing table (--wide). */
  wide?: boolean;
}

function write(dir: string, result: SweepResult): void {
  const file = join(dir, 'sweep.json');
  writeFileSync(`${file}.tmp`, `${JSON.stringify(result, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

const safeDirName = (key: string, value: string) => `${key}=${value}`.replace(/[^A-Za-z0-9._=-]/g, '_');

/** Every value is validated (set in the scenario, the whole scenario checked) before anything runs. */
export function validateSweep(o: Pick<SweepOptions, 'base' | 'vary' | 'variants' | 'findOom' | 'platform'>): void {
  const values = o.findOom ? [o.findOom.low, o.findOom.high] : o.vary.values;
  const problems: string[] = [];
  for (const v of values) {
    try {
      const l = scenarioWith(o.base, o.vary.key, v);
      if (o.variants) selectVariants(l.scenario, o.variants);
      stormLoadDriver.validate(l.scenario, (o.platform ?? localPlatform).loadSite);
    } catch (err) {
      if (err instanceof ConfigError) problems.push(...err.problems);
      else throw err;
    }
  }
  if (o.findOom) {
    const lo = numericValue(o.findOom.low);
    const hi = numericValue(o.findOom.high);
    if (lo === null || hi === null || !(lo < hi))
      problems.push(`--find-oom must be <low>..<high> with numeric values, low < high, got ${o.findOom.low}..${o.findOom.high}`);
    if (!(o.findOom.resolution > 0)) problems.push(`--resolution must be a positive number, got ${o.findOom.resolution}`);
  }
  if (problems.length) throw new ConfigError([...new Set(problems)]);
}

/** Bisects each variant's OOM boundary between --find-oom's low and high, run by run, until within the resolution. */
async function findOomBoundaries(
  o: SweepOptions,
  findOom: NonNullable<SweepOptions['findOom']>,
  runAt: (value: string, variants: string[] | undefined, planned: number) => Promise<SweepPoint[]>,
  interrupted: () => boolean,
  log: (line: string) => void,
): Promise<void> {
  const names = o.variants ?? o.base.scenario.variants.map((v) => v.name);
  const unit = /^-?\d+(?:\.\d+)?([A-Za-z]*)$/.exec(findOom.low)?.[1] ?? '';
  const scale = unit ? numericValue(`1${unit}`)! : 1;
  for (const name of names) {
    const killedAt = async (n: number): Promise<boolean | null> => {
      const pts = await runAt(`${n}${unit}`, [name], 0);
      const p = pts.find((x) => x.variant === name);
      return p && !p.error ? p.oomKills > 0 : null;
    };
    let lo = numericValue(findOom.low)! / scale;
    let hi = numericValue(findOom.high)! / scale;
    const atLo = await killedAt(lo);
    if (interrupted()) break;
    const atHi = await killedAt(hi);
    if (interrupted()) break;
    if (atLo === null || atHi === null || atLo === atHi) {
      log(`sweep: ${name}: the OOM outcome is the same at ${findOom.low} and ${findOom.high} (or a run failed): no boundary in that range`);
      continue;
    }
    // Invariant: the outcome at lo is atLo, at hi the other one; halve until within the resolution.
    while (hi - lo > findOom.resolution && !interrupted()) {
      const mid = Math.round((lo + hi) / 2);
      if (mid === lo || mid === hi) break;
      const k = await killedAt(mid);
      if (k === null) break;
      if (k === atLo) lo = mid;
      else hi = mid;
    }
    log(`sweep: ${name}: OOM outcome changes between ${lo}${unit} and ${hi}${unit}`);
  }
}

export async function runSweep(o: SweepOptions): Promise<SweepResult> {
  validateSweep(o);
  const log = o.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  mkdirSync(o.outDir, { recursive: true });
  const result: SweepResult = {
    schemaVersion: SWEEP_SCHEMA_VERSION,
    scenario: o.base.scenario.name,
    key: o.vary.key,
    values: [],
    mode: o.findOom ? 'bisect' : 'grid',
    status: 'running',
    startedAt: new Date().toISOString(),
    endedAt: null,
    points: [],
    boundaries: {},
    lastKilled: {},
  };
  write(o.outDir, result);
  const durations: number[] = [];
  const interrupted = () => o.signal?.aborted === true;

  /** One run of the scenario at `value` (for the given variants); its points join the result. */
  const runAt = async (value: string, variants: string[] | undefined, planned: number): Promise<SweepPoint[]> => {
    let loaded = scenarioWith(o.base, o.vary.key, value);
    let dropped: string[] = [];
    if (variants) ({ scenario: loaded.scenario, dropped } = { ...selectVariants(loaded.scenario, variants) });
    loaded = { ...loaded };
    const done = result.values.length;
    const eta = durations.length ? Math.round(((planned - done) * durations.reduce((a, b) => a + b, 0)) / durations.length) : null;
    log(`sweep ${o.vary.key}=${value}: run ${done + 1}${planned ? ` of ${planned}` : ''}${eta !== null ? `, about ${Math.ceil(eta / 60)} min left` : ''}`);
    const started = Date.now();
    const runDir = safeDirName(o.vary.key, value) + (variants ? `-${variants.join('+')}` : '');
    const outcome = await runScenario({
      loaded,
      load: stormLoadDriver,
      outDir: join(o.outDir, runDir),
      command: `attestorm sweep ${o.base.file ?? ''} --vary ${o.vary.key}=${value}`,
      render: false,
      droppedExpectations: dropped,
      progress: new Progress({ tty: false, plainEverySeconds: 10 }),
      wide: o.wide === true,
      ...(o.platform ? { platform: o.platform } : {}),
    });
    durations.push((Date.now() - started) / 1000);
    if (outcome.results.status === 'interrupted') return [];
    const points = pointsOf(value, numericValue(value), runDir, outcome.results);
    result.values.push(value);
    result.points.push(...points);
    const order = sweepOrder([...new Set(result.values)], numericValue);
    const b = boundaries(result.points, order);
    result.boundaries = b.first;
    result.lastKilled = b.last;
    write(o.outDir, result);
    for (const p of points)
      log(
        `  ${p.variant}: peak ${p.peakMemoryBytes === null ? 'unmeasured' : `${(p.peakMemoryBytes / 2 ** 20).toFixed(1)} MiB`}, OOM kills ${p.oomKills}${p.error ? `, error: ${p.error}` : ''}`,
      );
    return points;
  };

  if (!o.findOom) {
    for (const v of o.vary.values) {
      if (interrupted()) break;
      await runAt(v, o.variants, o.vary.values.length);
    }
  } else await findOomBoundaries(o, o.findOom, runAt, interrupted, log);
  result.status = interrupted() ? 'interrupted' : 'complete';
  result.endedAt = new Date().toISOString();
  write(o.outDir, result);
  return result;
}
