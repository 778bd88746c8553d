// What the working set held at its highest reading: anonymous memory (RSS), kernel memory (socket
// buffers, slab), file pages still counted (active file, shared memory), and what those leave
// unattributed, so a peak at the limit is explained rather than a bare figure.
import type { MemorySample } from './sample-lines.js';

/** One memory sample's working set and its parts (bytes); null: that part was not available. */
export interface WorkingSetParts {
  /** The sample's time: ms since its repetition's load start. */
  t: number;
  workingSetBytes: number;
  rssBytes: number | null;
  kernelBytes: number | null;
  activeFileBytes: number | null;
  shmemBytes: number | null;
  /** The repetition folder it was read in (on a variant's peaks, which take one repetition's). */
  runDir?: string;
}

/** The sample's parts, or null when it carries none of them (a sampler that does not read them). */
export function workingSetPartsOf(s: MemorySample): WorkingSetParts | null {
  if (s.workingSetBytes == null) return null;
  if (s.kernelBytes === undefined && s.activeFileBytes === undefined && s.shmemBytes === undefined) return null;
  return {
    t: s.t,
    workingSetBytes: s.workingSetBytes,
    rssBytes: s.rssBytes,
    kernelBytes: s.kernelBytes ?? null,
    activeFileBytes: s.activeFileBytes ?? null,
    shmemBytes: s.shmemBytes ?? null,
  };
}

const MiB = 2 ** 20;
const mib = (b: number) => (b / MiB).toFixed(1);

/**
 * "254.8 MiB working set = 212.9 RSS + 38.0 kernel + 3.9 file pages (3.5 active file, 0.4 shmem) + 0.1
 * unattributed". The parts come from files read a moment apart (v1's usage is a per-CPU batched
 * counter), so the rest can be a little off either way; a part that could not be read is said to be
 * not available and its share stays in the rest, never a 0.
 */
export function workingSetPartsWords(p: WorkingSetParts): string {
  const terms: string[] = [];
  const missing: string[] = [];
  let rest = p.workingSetBytes;
  const add = (bytes: number | null, words: string, detail = '') => {
    if (bytes === null) {
      missing.push(words);
      return;
    }
    rest -= bytes;
    terms.push(`${mib(bytes)} ${words}${detail}`);
  };
  add(p.rssBytes, 'RSS');
  add(p.kernelBytes, 'kernel');
  const file = p.activeFileBytes === null && p.shmemBytes === null ? null : (p.activeFileBytes ?? 0) + (p.shmemBytes ?? 0);
  const fileDetail = [p.activeFileBytes === null ? null : `${mib(p.activeFileBytes)} active file`, p.shmemBytes === null ? null : `${mib(p.shmemBytes)} shmem`]
    .filter((x) => x !== null)
    .join(', ');
  add(file, 'file pages', ` (${fileDetail})`);
  if (terms.length === 0) return `${mib(p.workingSetBytes)} MiB working set (its parts not available)`;
  let text = `${mib(p.workingSetBytes)} MiB working set = ${terms.join(' + ')}`;
  if (Math.abs(rest) >= 0.05 * MiB || missing.length > 0) text += ` ${rest < 0 ? '−' : '+'} ${mib(Math.abs(rest))} unattributed`;
  if (missing.length > 0) text += ` (${missing.join(' and ')} not available${p.kernelBytes === null ? ': no kernel-memory accounting on the cgroup' : ''})`;
  return text;
}
