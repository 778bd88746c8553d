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
  // Written before the results schema moved to variants: converted for the trend, not gated across the change.
  const v1 = results({
    startedAt: '2026-11-26T02:00:00.000Z',
    variants: [
      { name: 'pre-attestation', peakMiB: 97 },
      { name: 'post-attestation', peakMiB: 62 },
    ],
  });
  const placements = v1.variants.map(({ agent: _a, spread: _s, deaths: _d, verdict: _v, ...p }) => ({ ...p, expectations: [] }));
  const { variants: _variants, runner: _runner, verdict: _verdict, droppedExpectations: _dropped, ...rest } = v1;
  await mkdir(path.join(root, 'old'), { recursive: true });
  await writeFile(path.join(root, 'old', 'results.json'), JSON.stringify({ ...rest, schemaVersion: 1, placements }));
  await mkdir(path.join(root, 'broken'), { recursive: true });
  await writeFile(path.join(root, 'broken', 'results.json'), '{"schemaVersion": 2');
  return root;
}
