// summary.md's table shows what each variant held and every memory measure the run has: cgroup
// usage beside the working set, attestations in flight where the agent counts them, and the agent's
// own open-connection gauge where it reports one (SPIRE, which has no in-flight gauge).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderReports } from '../../src/report/index.js';
import { writeFixtureRun } from './fixture.js';

let parent: string;
afterAll(async () => {
  if (parent) await rm(parent, { recursive: true, force: true });
});

async function summaryOf(edit: (results: { variants: Record<string, unknown>[] }) => void): Promise<string> {
  parent ??= await mkdtemp(path.join(tmpdir(), 'attestorm-held-columns-'));
  const dir = await writeFixtureRun({ parent, name: `run-${Math.random().toString(36).slice(2, 8)}` });
  const file = path.join(dir, 'results.json');
  const results = JSON.parse(await readFile(file, 'utf8'));
  edit(results);
  await writeFile(file, JSON.stringify(results));
  await renderReports(dir, { formats: ['md'] });
  return readFile(path.join(dir, 'summary.md'), 'utf8');
}

const header = (md: string) => md.split('\n').find((l) => l.startsWith('| variant |'))!;

describe("summary.md's comparison table", () => {
  it('adds the open-connection gauge where an agent reports one, and leaves it out where none does', async () => {
    const spire = await summaryOf((r) => {
      r.variants[0]!.agentPeaks = { openConnections: 1201, goroutines: 8096 };
    });
    expect(header(spire)).toContain('peak connections open (agent)');
    expect(spire).toMatch(/\| 1201 \|/);
    const plain = await summaryOf((r) => {
      for (const v of r.variants) delete v.agentPeaks;
    });
    expect(header(plain)).not.toContain('peak connections open (agent)');
  });

  it('shows the time near the limit where the run read it, and the verdict says "at its limit"', async () => {
    const md = await summaryOf((r) => {
      r.variants[0]!.memoryPressure = [
        { rep: 1, stormSeconds: 60, nearLimitSeconds: 41, longestNearLimitSeconds: 30.2, limitHits: 12, stallSome: 0.14, stallFull: 0.06 },
      ];
      r.variants[0]!.atLimit = '41.0 s of 60 s at >= 95% (longest 30.2 s), 12 limit hits, stalled 14% (all tasks 6%)';
      r.variants[0]!.oomKills = 0;
    });
    expect(header(md)).toContain('at ≥ 95% of limit (s of storm; hits; stalled)');
    expect(md).toContain('| 41.0 of 60; 12 hits; stalled 14% (at its limit) |');
    expect(md).toMatch(/survived at its limit \(41\.0 s of 60 s at >= 95% \(longest 30\.2 s\), 12 limit hits, stalled 14% \(all tasks 6%\)\)/);
    const older = await summaryOf((r) => {
      for (const v of r.variants) delete v.memoryPressure;
    });
    expect(header(older)).not.toContain('at ≥ 95% of limit');
  });

  it('shows attestations in flight where the agent counts them', async () => {
    const md = await summaryOf((r) => {
      r.variants[0]!.peakInflightAttestations = 42;
    });
    expect(header(md)).toContain('peak attestations in flight');
  });
});
