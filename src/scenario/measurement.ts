// What one repetition measures starts the same on every platform: an empty RepMeasurement, the
// fault scheduler's records stamped with the repetition they happened in, and the workers' client.
import { NO_PEAKS, type FaultRecord, type LoadClientRecord } from '../contract/index.js';
import type { RepMeasurement } from './aggregate.js';

/** Nothing measured yet: no peak (null, never 0), no kills, no calls. */
export function newMeasurement(dirName: string, limitBytes: number): RepMeasurement {
  return {
    runDir: dirName,
    memoryLimitBytes: limitBytes,
    peaks: { ...NO_PEAKS },
    oomKills: 0,
    restarts: 0,
    downtimeSeconds: 0,
    loadSeconds: 0,
    counts: { ok: 0, rateLimited: 0, deadlineExceeded: 0, error: 0 },
    histograms: {},
    peakInflightAttestations: null,
    rejectionsByKeyType: {},
    workerMemoryBytes: null,
    deaths: [],
  };
}

/** The scheduler's records of one repetition, each with its repetition number. */
export function faultRecordsOf(records: ReadonlyArray<Omit<FaultRecord, 'rep'>>, rep: number): FaultRecord[] {
  return records.map((r) => ({ rep, ...r }));
}

/** The workers' client as the scenario asked for it and as the generator ran it; the reason only where they differ. */
export function loadClientRecord(requested: string, ran: string, reason?: string): LoadClientRecord {
  return { requested, ran, ...(ran !== requested && reason ? { reason } : {}) };
}
