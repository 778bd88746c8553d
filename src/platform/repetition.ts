// What one repetition is on every platform (this machine's sandbox in local/local-repetition.ts, a
// cluster in cluster/cluster-repetition.ts): its folder and samples file, the timeline both write
// through, the sampler loop and what it banks from the agent's metrics, the warm-up, the fault
// schedule's start, bystander feed and undoing, deaths, and the figures it closes with, each
// decided here once.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DeathRecord, SampleLine } from '../contract/index.js';
import { FaultScheduler, type Fault, type FaultTarget } from '../fault/index.js';
import { NdjsonWriter, SamplerLoop, type Sampler } from '../sample/index.js';
import {
  completeRejections,
  deathRecord,
  faultRecordsOf,
  newMeasurement,
  oomKillsOf,
  RejectionTotals,
  Timeline,
  type DeathCause,
  type RepMeasurement,
  type Scenario,
} from '../scenario/index.js';
import { sleep } from '../util/index.js';
import { slowStartOf } from '../errors.js';
import { RunEndingFailure } from './platform.js';

/** One repetition's record while it runs. */
export interface RepetitionRecord {
  /** Its folder in the run folder (`<variant>.r<rep>`). */
  dir: string;
  rep: number;
  /** Its samples.ndjson: every sample line and event. */
  writer: NdjsonWriter;
  timeline: Timeline;
  m: RepMeasurement;
  /** The live view: every line written, the samplers' too. */
  onSample: ((line: SampleLine) => void) | undefined;
  /** The agent's deaths as seen, each with the phase it fell in. */
  deaths: DeathRecord[];
  /** The agent's rejections by key type, as its metrics scrapes saw them across restarts. */
  rejections: RejectionTotals;
  loop: SamplerLoop | null;
  faults: FaultScheduler | null;
}

/** The folder, the samples file (each line also to onSample, the live view), the timeline and the empty measurement. */
export function openRepetitionRecord(
  runDir: string,
  dirName: string,
  rep: number,
  limitBytes: number,
  onSample?: (line: SampleLine) => void,
): RepetitionRecord {
  const dir = join(runDir, dirName);
  mkdirSync(dir, { recursive: true });
  const writer = new NdjsonWriter(join(dir, 'samples.ndjson'));
  const timeline = new Timeline((line: SampleLine) => {
    writer.write(line);
    onSample?.(line);
  });
  return {
    dir,
    rep,
    writer,
    timeline,
    m: newMeasurement(dirName, limitBytes),
    onSample,
    deaths: [],
    rejections: new RejectionTotals(),
    loop: null,
    faults: null,
  };
}

/**
 * The samplers into the samples file on the repetition's clock, each line to the live view; from the
 * agent's metrics lines the peak of attestations in flight and the rejections by key type, banked
 * across the agent's restarts.
 */
export function startSamplerLoop(record: RepetitionRecord, samplers: Sampler[]): SamplerLoop {
  const { m } = record;
  const loop = (record.loop = new SamplerLoop(samplers, record.writer, () => record.timeline.t()));
  loop.onSample((line) => {
    record.onSample?.(line);
    if (line.kind !== 'metrics') return;
    if (line.inflightAttestations !== null) m.peakInflightAttestations = Math.max(m.peakInflightAttestations ?? 0, line.inflightAttestations);
    record.rejections.observe(line);
  });
  loop.start();
  return loop;
}

/** A death of the agent in the phase it fell in: as it happens, or at `at` (Date.now()) when seen later. */
export function noteDeath(
  record: RepetitionRecord,
  outsideLoad: Scenario['oomKillsOutsideLoad'],
  death: { cause: DeathCause; detail: string; at?: number },
): void {
  const { timeline } = record;
  const when = death.at === undefined ? { atMs: timeline.t(), phase: timeline.phase } : { atMs: timeline.t(death.at), phase: timeline.phaseAt(death.at) };
  record.deaths.push(deathRecord({ rep: record.rep, ...when, cause: death.cause, detail: death.detail }, outsideLoad));
}

/**
 * The scenario's fault schedule against the platform's target, from `at` (Date.now() when the calls
 * started). Each start is placed when the action began, not when its starter returned (a kill waits
 * for the death, a burst for its wave to call).
 */
export function startFaults(record: RepetitionRecord, faults: Fault[], at: number, signal: AbortSignal, target: FaultTarget): FaultScheduler {
  const scheduler = (record.faults = new FaultScheduler({
    faults,
    loadStart: at,
    signal,
    target,
    onEvent: (e) => record.timeline.event(e.type, e.detail, at + e.t),
  }));
  scheduler.start();
  return scheduler;
}

/** A second of the bystanders' calls by outcome. */
interface BystanderCounts {
  ok: number;
  rateLimited: number;
  deadlineExceeded: number;
  error: number;
}

/** The bystanders' second ending `tEnd` ms after the calls started: fault recovery is measured on it. */
export function feedBystanders(record: RepetitionRecord, b: BystanderCounts | null | undefined, tEnd: number): void {
  if (record.faults && b) record.faults.bystanderSecond({ t: tEnd, calls: b.ok + b.rateLimited + b.deadlineExceeded + b.error, ok: b.ok });
}

/** At the load's end: the schedule stopped (whatever is still in force undone) and its records into the measurement. */
export async function endFaults(record: RepetitionRecord): Promise<void> {
  if (record.faults) record.m.faults = faultRecordsOf(await record.faults.stop(), record.rep);
}

/** On finishing, whatever happened: a fault still holding the agent (frozen, squeezed, throttled) undone first. */
export async function undoFaults(record: RepetitionRecord): Promise<void> {
  if (record.faults && !record.m.faults) record.m.faults = faultRecordsOf(await record.faults.stop().catch(() => []), record.rep);
}

/** The agent's time unavailable, in tenths of a second. */
export function noteDowntime(m: RepMeasurement, ms: number): void {
  m.downtimeSeconds = Math.round(ms / 100) / 10;
}

/**
 * The warm-up: from here t counts toward the planned start of the load (negative until then), the
 * samplers start, and the scenario's warm-up passes unless an interrupt cuts it short.
 */
async function runWarmUp(timeline: Timeline, warmupMs: number, signal: AbortSignal, startSamplers: () => void): Promise<void> {
  timeline.fix(Date.now() + warmupMs);
  timeline.enter('warmup');
  startSamplers();
  timeline.event('warmup-start');
  await sleep(warmupMs, signal);
}

/**
 * The figures a repetition closes with: its deaths and the OOM kills among them (the contract's
 * `counted`), and the rejections by key type, completed up to the generator's count of storm and
 * bystander rejections (the agent's metrics only attribute them to key types).
 */
export function closeMeasurement(record: RepetitionRecord): void {
  const { m } = record;
  m.deaths = record.deaths;
  m.oomKills = oomKillsOf(record.deaths);
  m.rejectionsByKeyType = completeRejections(record.rejections.scraped(), m.counts.rateLimited + (m.bystanders?.totals.rateLimited ?? 0));
}

/** What a platform does in each phase of one repetition; runRepetitionSteps calls them in order. */
export interface RepetitionSteps {
  /** The agent under test and what it needs (on a cluster, the load pods too) up and ready; false: interrupted first. */
  start(): Promise<boolean>;
  /** The samplers (startSamplerLoop), started as the warm-up begins. */
  startSamplers(): void;
  /** The load with its faults, from the calls' start through the drain; the load's figures into the measurement. */
  storm(): Promise<void>;
  /** Faults undone, the agent stopped, its last figures taken (closeMeasurement), everything reaped: run whatever happened before. */
  finish(): Promise<void>;
}

/**
 * How a platform reports a repetition that failed: `record` keeps the failure as the measurement's
 * error, so the run goes on with the next variant (an agent on this machine that would not start
 * says nothing about the others); `throw` ends the run with it (a cluster that cannot run one
 * variant's pods cannot run the others'), as a RunEndingFailure carrying the measurement so far.
 */
export type RepetitionFailures = 'record' | 'throw';

/** One repetition, the same on every platform: start → warm-up (samplers started) → storm with its faults → finish. */
export async function runRepetitionSteps(
  record: RepetitionRecord,
  warmupMs: number,
  signal: AbortSignal,
  failures: RepetitionFailures,
  steps: RepetitionSteps,
): Promise<RepMeasurement> {
  const { timeline, m } = record;
  try {
    if (!(await steps.start())) return m;
    await runWarmUp(timeline, warmupMs, signal, () => steps.startSamplers());
    if (signal.aborted) return m;
    await steps.storm();
    return m;
  } catch (err) {
    if (!timeline.fixed) timeline.fix(Date.now());
    if (failures === 'throw') {
      // Said on the timeline before finish closes it; the measurement is complete once finish has run.
      m.error = (err as Error).message;
      timeline.event('note', `variant run failed, the run ends: ${m.error}`);
      throw new RunEndingFailure(m, err as Error);
    }
    if (slowStartOf(err)) {
      m.notJudged = `the machine could not start the storm in time (${(err as Error).message}); too slow or too busy for this storm, which says nothing of the agent`;
      timeline.event('note', `variant run not judged: ${m.notJudged}`);
      return m;
    }
    m.error = (err as Error).message;
    timeline.event('note', `variant run failed: ${m.error}`);
    return m;
  } finally {
    await steps.finish();
  }
}
