// The table "Kubelet /pods fetches" (each variant's fetch rate with its spread, answer times, bytes,
// concurrency) and "SPIRE goroutines by owner" (where a SPIRE agent's goroutines stood when there
// were most of them). Columns declared once for the HTML and Markdown reports.
import { KUBELET_FETCH_LINE_CAP, SPIRE_GOROUTINE_OWNER_WORDS, SPIRE_GOROUTINE_OWNERS, type SpireGoroutineOwner } from '../contract/index.js';
import type { FetchRow, GoroutineRow } from './report-model.js';
import { fmt, type Column } from './table-columns.js';

export const FETCH_TABLE_TITLE = 'Kubelet /pods fetches while the calls ran';

const ms = (v: number | null | undefined) => (v === null || v === undefined ? '—' : v < 10 ? v.toFixed(1) : v.toFixed(0));

function statuses(r: FetchRow): string {
  const other = Object.entries(r.byStatus).filter(([k]) => k !== '200');
  return other.length === 0 ? 'all 200' : other.map(([k, n]) => `${n}× ${k === 'none' ? 'no answer' : k}`).join(', ');
}

export const FETCH_COLUMNS: Column<FetchRow>[] = [
  { header: 'variant', cell: (r) => r.variant, numeric: false },
  {
    header: 'requests/s',
    cell: (r) =>
      r.repetitions > 1 && r.requestsPerSecondRange.min !== r.requestsPerSecondRange.max
        ? `${fmt(r.requestsPerSecond, 2)} (${fmt(r.requestsPerSecondRange.min, 2)}–${fmt(r.requestsPerSecondRange.max, 2)})`
        : fmt(r.requestsPerSecond, 2),
    numeric: true,
  },
  { header: 'median', cell: (r) => ms(r.answerMs?.p50), numeric: true, group: 'answer time, arrival to last byte (ms)' },
  { header: 'p95', cell: (r) => ms(r.answerMs?.p95), numeric: true, group: 'answer time, arrival to last byte (ms)' },
  { header: 'max', cell: (r) => ms(r.answerMs?.max), numeric: true, group: 'answer time, arrival to last byte (ms)' },
  { header: 'KiB per answer', cell: (r) => (r.bytesPerAnswer === null ? '—' : fmt(r.bytesPerAnswer / 1024, 0)), numeric: true },
  { header: 'most at once', cell: (r) => String(r.maxInFlight), numeric: true },
  { header: 'client left first', cell: (r) => String(r.abandoned), numeric: true },
  { header: 'statuses', cell: statuses, numeric: false },
  { header: 'reps', cell: (r) => String(r.repetitions), numeric: true },
];

/** What the figures are, for under the table. */
export function fetchTableNote(rows: readonly FetchRow[]): string {
  const folded = rows.reduce((n, r) => n + r.aggregated, 0);
  const fromSamples = rows.some((r) => r.source === 'samples');
  return (
    "Every GET /pods the kubelet emulator received while the calls ran (from the first call to the load's end), per variant: the rate as the median over repetitions (min–max), " +
    'answer times from the arrival of the request to the last byte of its answer over every repetition, the body bytes per answer, the most requests in flight at once, and requests whose client left before the answer was whole. ' +
    `Each request is a kubelet-fetch line in samples.ndjson, up to ${KUBELET_FETCH_LINE_CAP} a second; ` +
    (folded > 0
      ? `${folded} requests in busier seconds were folded into one kubelet-fetches line a second (counted here, not drawn one by one).`
      : 'no second had more.') +
    (fromSamples ? " Some variants' figures are read from the lines alone (results.json predates them): their answer times leave out folded requests." : '')
  );
}

export const GOROUTINE_TABLE_TITLE = 'SPIRE goroutines by owner (profile with the most)';

const OWNER_HEADERS: Record<SpireGoroutineOwner, string> = {
  'kubelet-fetch': 'fetching',
  'pod-list-wait': 'waiting for a pod list',
  'k8s-attestor': 'k8s attestor, other',
  'kubelet-http': 'kubelet HTTP conns',
  attestation: 'attestation',
  handlers: 'handlers',
  'grpc-transport': 'gRPC transport',
  other: 'other',
};

/** One repetition of a SPIRE variant that saved goroutine profiles. */
const seconds = (atMs: number) => fmt(atMs / 1000, 0);

export const GOROUTINE_COLUMNS: Column<GoroutineRow>[] = [
  { header: 'variant', cell: (r) => (r.reps > 1 ? `${r.variant} r${r.rep}` : r.variant), numeric: false },
  { header: 'at (s)', cell: (r) => seconds(r.largest.atMs), numeric: true },
  { header: 'goroutines', cell: (r) => String(r.largest.total), numeric: true },
  ...SPIRE_GOROUTINE_OWNERS.map((o): Column<GoroutineRow> => ({
    header: OWNER_HEADERS[o],
    cell: (r) => String(r.largest.byOwner[o]),
    numeric: true,
    group: 'by owner',
  })),
  { header: 'last profile at (s)', cell: (r) => seconds(r.last.atMs), numeric: true },
  { header: 'its goroutines', cell: (r) => String(r.last.total), numeric: true },
  { header: 'profiles', cell: (r) => String(r.profiles), numeric: true },
];

export function goroutineTableNote(): string {
  const owners = SPIRE_GOROUTINE_OWNERS.map((o) => `${OWNER_HEADERS[o]} = ${SPIRE_GOROUTINE_OWNER_WORDS[o]}`).join('; ');
  return (
    "The agent's goroutines (/debug/pprof/goroutine?debug=1) in the profile that counted most of them and in the last one, at seconds from the calls' start. " +
    `Each stack goes to the first owner one of its frames names, in this order: ${owners}. The profiles are spire-goroutines-<t>ms.txt.gz in the repetition's folder.`
  );
}
