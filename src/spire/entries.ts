// Registration entries for sandbox pods, written as SPIRE's entry JSON and created in batches:
// one SPIFFE ID per pod, selected by `k8s:pod-uid:<uid>`, all under one stable parent alias so
// they survive agent restarts (each restart attests with a new join token).
import { writeFileSync } from 'node:fs';
import { RunError } from '../errors.js';

export interface PodForEntry {
  uid: string;
  name?: string;
  namespace?: string;
}

export interface EntryJson {
  spiffe_id: string;
  parent_id: string;
  selectors: Array<{ type: string; value: string }>;
}

/** The pod's workload SPIFFE ID: by namespace and name when known, else by UID. */
export function workloadIdFor(trustDomain: string, pod: PodForEntry): string {
  if (pod.name && pod.namespace) return `spiffe://${trustDomain}/ns/${pod.namespace}/pod/${pod.name}`;
  return `spiffe://${trustDomain}/pod/${pod.uid}`;
}

export function entriesJson(trustDomain: string, parentId: string, pods: readonly PodForEntry[]): { entries: EntryJson[] } {
  return {
    entries: pods.map((p) => ({
      spiffe_id: workloadIdFor(trustDomain, p),
      parent_id: parentId,
      selectors: [{ type: 'k8s', value: `pod-uid:${p.uid}` }],
    })),
  };
}

export function writeEntriesFile(file: string, doc: { entries: EntryJson[] }): void {
  writeFileSync(file, `${JSON.stringify(doc, null, 1)}\n`);
}

interface BatchResult {
  status?: { code?: number; message?: string };
  entry?: { id?: string; spiffe_id?: { path?: string } };
  id?: string;
}

// gRPC codes in the batch answer: 0 OK, 6 AlreadyExists (an entry made by an earlier batch).
const OK = 0;
const ALREADY_EXISTS = 6;

/**
 * Counts from `entry create -output json`, and the new entries' IDs in request order (null for an
 * entry that already existed); throws RunError listing the entries SPIRE refused.
 */
export function checkBatchOutput(stdout: string, expected: number): { created: number; existing: number; ids: Array<string | null> } {
  let doc: { results?: BatchResult[] };
  try {
    doc = JSON.parse(stdout) as { results?: BatchResult[] };
  } catch {
    throw new RunError(`spire-server entry create printed no JSON: ${stdout.slice(0, 300)}`);
  }
  const results = doc.results ?? [];
  if (results.length !== expected) throw new RunError(`spire-server entry create answered ${results.length} results for ${expected} entries`);
  let created = 0;
  let existing = 0;
  const failed: string[] = [];
  const ids: Array<string | null> = [];
  for (const r of results) {
    const code = r.status?.code ?? OK;
    ids.push(code === OK ? (r.entry?.id ?? null) : null);
    if (code === OK) created++;
    else if (code === ALREADY_EXISTS) existing++;
    else failed.push(`${r.entry?.spiffe_id?.path ?? '?'}: code ${code} ${r.status?.message ?? ''}`.trim());
  }
  if (failed.length > 0)
    throw new RunError(`spire-server refused ${failed.length} of ${expected} entries: ${failed.slice(0, 5).join('; ')}${failed.length > 5 ? ' ...' : ''}`);
  return { created, existing, ids };
}

// NotFound in a delete batch: the entry is already gone, which is what was asked.
const NOT_FOUND = 5;

/** Checks `entry delete -output json`; throws RunError listing the deletions SPIRE refused. */
export function checkDeleteOutput(stdout: string, expected: number): number {
  let doc: { results?: BatchResult[] };
  try {
    doc = JSON.parse(stdout) as { results?: BatchResult[] };
  } catch {
    throw new RunError(`spire-server entry delete printed no JSON: ${stdout.slice(0, 300)}`);
  }
  const results = doc.results ?? [];
  if (results.length !== expected) throw new RunError(`spire-server entry delete answered ${results.length} results for ${expected} entries`);
  const failed = results
    .filter((r) => ![OK, NOT_FOUND].includes(r.status?.code ?? OK))
    .map((r) => `${r.id ?? '?'}: code ${r.status?.code} ${r.status?.message ?? ''}`.trim());
  if (failed.length > 0) throw new RunError(`spire-server refused to delete ${failed.length} of ${expected} entries: ${failed.slice(0, 5).join('; ')}`);
  return results.length;
}
