// What one repetition is on every platform (this machine's sandbox in variant-run.ts, a cluster in
// src/kube/host/run-variant.ts): its folder and samples file, the timeline both write through, the
// warm-up, and the figures it closes with, each decided here once.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DeathRecord, SampleLine } from '../contract/index.js';
import { NdjsonWriter } from '../sample/index.js';
import { sleep } from '../util/index.js';
import { slowStartOf } from '../errors.js';
import type { RepMeasurement } from './aggregate.js';
import { oomKillsOf } from './death-record.js';
import { newMeasurement } from './measurement.js';
import { completeRejections } from './rejection-totals.js';
import { Timeline } from './timeline.js';

/** One repetition's record while it runs. */
export interface RepetitionRecord {
  /** Its folder in the run folder (`<variant>.r<rep>`). */
  dir: string;
  /** Its samples.ndjson: every sample line and event. */
  writer: NdjsonWriter;
  timeline: Timeline;
  m: RepMeasurement;
}

/** The folder, the samples file (each line also to onSample, the live view), the timeline and the empty measurement. */
export function openRepetitionRecord(runDir: string, dirName: string, limitBytes: number, onSample?: (line: SampleLine) => void): RepetitionRecord {
  const dir = join(runDir, dirName);
  mkdirSync(dir, { recursive: true });
  const writer = new NdjsonWriter(join(dir, 'samples.ndjson'));
  const timeline = new Timeline((line: SampleLine) => {
    writer.write(line);
    onSample?.(line);
  });
  return { dir, writer, timeline, m: newMeasurement(dirName, limitBytes) };
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
export function closeMeasurement(m: RepMeasurement, deaths: DeathRecord[], scrapedRejections: Record<string, number>): void {
  m.deaths = deaths;
  m.oomKills = oomKillsOf(deaths);
  m.rejectionsByKeyType = completeRejections(scrapedRejections, m.counts.rateLimited + (m.bystanders?.totals.rateLimited ?? 0));
}

/** What a platform does in each phase of one repetition; runRepetitionSteps calls them in order. */
export interface RepetitionSteps {
  /** The agent under test and what it needs (on a cluster, the load pods too) up and ready; false: interrupted first. */
  start(): Promise<boolean>;
  /** The samplers, started as the warm-up begins. */
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
 * variant's pods cannot run the others').
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
    if (failures === 'throw') throw err;
    if (!timeline.fixed) timeline.fix(Date.now());
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
