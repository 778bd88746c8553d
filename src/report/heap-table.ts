// The table "SPIRE live heap by owner (largest profile)": for each SPIRE variant that saved heap
// profiles, what held its live Go heap when it was largest, and where it ended. Columns declared
// once for the HTML and Markdown reports.
import { SPIRE_HEAP_OWNER_WORDS, SPIRE_HEAP_OWNERS, type SpireHeapOwner } from '../contract/index.js';
import type { HeapRow } from './report-model.js';
import { fmt, type Column } from './table-columns.js';

export const HEAP_TABLE_TITLE = 'SPIRE live heap by owner (largest profile)';

const MiB = 2 ** 20;
const mib = (bytes: number) => fmt(bytes / MiB, 1);
const seconds = (ms: number) => fmt(ms / 1000, 0);

/** Short column headers; SPIRE_HEAP_OWNER_WORDS says what each holds, under the table. */
const OWNER_HEADERS: Record<SpireHeapOwner, string> = {
  'pod-list': 'pod lists',
  'read-buffers': 'read buffers',
  'grpc-transport': 'gRPC transport',
  'grpc-client': 'gRPC client',
  'log-entries': 'log entries',
  calls: 'calls',
  goroutines: 'goroutines',
  other: 'other',
};

export const HEAP_COLUMNS: Column<HeapRow>[] = [
  { header: 'variant', cell: (r) => (r.reps > 1 ? `${r.variant} r${r.rep}` : r.variant), numeric: false },
  { header: 'at (s)', cell: (r) => seconds(r.largest.atMs), numeric: true },
  { header: 'live heap (MiB)', cell: (r) => mib(r.largest.totalBytes), numeric: true },
  ...SPIRE_HEAP_OWNERS.map((o): Column<HeapRow> => ({
    header: OWNER_HEADERS[o],
    cell: (r) => mib(r.largest.byOwner[o]),
    numeric: true,
    group: 'by owner (MiB)',
  })),
  { header: 'last profile at (s)', cell: (r) => seconds(r.last.atMs), numeric: true },
  { header: 'its live heap (MiB)', cell: (r) => mib(r.last.totalBytes), numeric: true },
  { header: 'profiles', cell: (r) => String(r.profiles), numeric: true },
];

/** What the figures are and what each owner holds, for under the table. */
export function heapTableNote(): string {
  const owners = SPIRE_HEAP_OWNERS.map((o) => `${OWNER_HEADERS[o]} = ${SPIRE_HEAP_OWNER_WORDS[o]}`).join('; ');
  return (
    "The agent's live Go heap (inuse_space, as go tool pprof -sample_index=inuse_space totals it; pprof's MB are MiB) in the " +
    "profile where it was largest and in the last one, at seconds from the calls' start. Each allocation goes to the first owner its stack holds, in this order: " +
    `${owners}. Goroutine stacks and the collector's headroom are not in the live heap.`
  );
}
