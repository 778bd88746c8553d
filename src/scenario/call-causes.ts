// What a variant's calls ended in and why: the storm's calls by gRPC status (from the load lines of
// each repetition's samples) and the agent log's most frequent failure lines, masked so that one
// cause reads as one line. A run whose calls all failed names its cause from these.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallCausesRecord } from '../contract/index.js';

/** Lines of one cause, as counted in one repetition. */
type Counts = Map<string, number>;

const MAX_LINES = 3;
/** An agent log larger than this is read from its end: the causes of a long run are in its last part too. */
const MAX_LOG_BYTES = 8 * 2 ** 20;

/** SPIRE's logfmt: msg="…" and error="…" carry the cause; the time and the caller's pid do not. */
function logfmtCause(line: string): string | null {
  if (!/\blevel=(error|warning)\b/.test(line)) return null;
  const field = (k: string) => new RegExp(`\\b${k}="((?:[^"\\\\]|\\\\.)*)"`).exec(line)?.[1] ?? new RegExp(`\\b${k}=(\\S+)`).exec(line)?.[1] ?? null;
  const msg = field('msg');
  const err = field('error');
  return [msg, err].filter(Boolean).join(': ') || null;
}

/** One log line as a cause, or null when it reports no failure. */
export function causeOfLogLine(raw: string): string | null {
  const line = raw.replace(/^attestorm agent: /, '').trim();
  if (!line || /similar lines dropped/.test(line)) return null;
  const cause = line.includes('level=') ? logfmtCause(line) : /\b(failed|error|refused|unreachable|timed? ?out)\b/i.test(line) ? line : null;
  if (!cause) return null;
  return (
    cause
      .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uid>')
      .replace(/\b[0-9a-f]{32,}\b/gi, '<id>')
      .replace(/\bpid \d+/g, 'pid N')
      .replace(/:\d{2,5}\b/g, ':<port>')
      // Addresses stay (127.0.0.1 says where); other numbers, durations among them, do not.
      .replace(/\b\d+(?:\.\d+)*(ms|s|µs)?\b/g, (m: string, unit: string | undefined) => (/^\d+(\.\d+){3}$/.test(m) ? m : `N${unit ?? ''}`))
  );
}

export function logCauses(text: string): Counts {
  const counts: Counts = new Map();
  for (const raw of text.split('\n')) {
    const c = causeOfLogLine(raw);
    if (c) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  return counts;
}

function readLog(file: string): string {
  if (!existsSync(file)) return '';
  const buf = readFileSync(file);
  return (buf.length > MAX_LOG_BYTES ? buf.subarray(buf.length - MAX_LOG_BYTES) : buf).toString('utf8');
}

/** The storm's calls by status in one repetition's samples (its load lines). */
export function stormCodes(samplesText: string): Record<string, number> {
  const byCode: Record<string, number> = {};
  for (const raw of samplesText.split('\n')) {
    if (!raw.includes('"kind":"load"')) continue;
    try {
      const s = JSON.parse(raw) as { kind?: string; byCode?: Record<string, number> };
      if (s.kind !== 'load') continue;
      for (const [code, n] of Object.entries(s.byCode ?? {})) byCode[code] = (byCode[code] ?? 0) + n;
    } catch {
      // A torn last line of a killed run: the lines before it still count.
    }
  }
  return byCode;
}

/** The record over a variant's repetition folders (under the run folder); null when none has samples or a log. */
export function callCausesOf(runDir: string, repDirs: readonly string[]): CallCausesRecord | null {
  const byCode: Record<string, number> = {};
  const lines: Counts = new Map();
  let found = false;
  for (const rep of repDirs) {
    const dir = join(runDir, rep);
    const samples = join(dir, 'samples.ndjson');
    if (existsSync(samples)) {
      found = true;
      for (const [code, n] of Object.entries(stormCodes(readFileSync(samples, 'utf8')))) byCode[code] = (byCode[code] ?? 0) + n;
    }
    const log = join(dir, 'agent.log');
    if (existsSync(log)) {
      found = true;
      for (const [line, n] of logCauses(readLog(log))) lines.set(line, (lines.get(line) ?? 0) + n);
    }
  }
  if (!found) return null;
  const agentLog = [...lines.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, MAX_LINES)
    .map(([line, count]) => ({ line, count }));
  return { byCode, agentLog };
}
