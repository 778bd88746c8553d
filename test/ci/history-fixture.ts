// A folder of four nightly run folders of one scenario (v2 results.json), written out of order, plus
// a run of another scenario and an old-schema folder: the third night regressed in memory.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { results, writeRunFolder } from './fixture.js';

export const NIGHTS = [
  { dir: 'nightly-3', startedAt: '2026-11-29T02:00:00.000Z', pre: 100, post: 60, kills: 0, commit: '3'.repeat(40), by: 0.99 },
  { dir: 'nightly-1', startedAt: '2026-11-27T02:00:00.000Z', pre: 98, post: 61, kills: 0, commit: '1'.repeat(40), by: 0.995 },
  { dir: 'nightly-2', startedAt: '2026-11-28T02:00:00.000Z', pre: 101, post: 59, kills: 0, commit: '2'.repeat(40), by: 0.99 },
  // A 40% rise in pre's memory and an OOM kill: the gate against nightly-3 fails.
  { dir: 'nested/nightly-4', startedAt: '2026-11-30T02:00:00.000Z', pre: 140, post: 60, kills: 1, commit: '4'.repeat(40), by: 0.97 },
];

export async function writeHistoryFolder(parent: string): Promise<string> {
  const root = path.join(parent, 'artifacts');
  for (const n of NIGHTS) {
    await writeRunFolder(
      root,
      n.dir,
      results({
        startedAt: n.startedAt,
        commit: n.commit,
        toolVersion: n.dir === 'nested/nightly-4' ? '0.2.0' : '0.1.0',
        variants: [
          { name: 'pre-attestation', peakMiB: n.pre, oomKills: n.kills, bystanders: { successRatio: n.by, longestGapMs: 300 } },
          { name: 'post-attestation', peakMiB: n.post },
        ],
      }),
    );
  }
  await writeRunFolder(root, 'other-scenario', results({ scenario: 'scaled', variants: [{ name: 'pre-attestation', peakMiB: 10 }] }));
  await mkdir(path.join(root, 'old'), { recursive: true });
  await writeFile(path.join(root, 'old', 'results.json'), JSON.stringify({ schemaVersion: 1, scenario: { name: 'quick' }, placements: [] }));
  return root;
}
