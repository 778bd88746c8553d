// The reports' cluster section: a three-node run's storm node, quiet node and server side by side,
// per variant and repetition, in the HTML page and in summary.md; absent from other runs.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterNodesRecord } from '../../src/contract/index.js';
import { renderReports } from '../../src/report/index.js';
import { writeFixtureRun } from './fixture.js';

const MiB = 2 ** 20;

function record(rep: number, o: { stormOom: number; attestations: ClusterNodesRecord['server']['attestations']; server: boolean }): ClusterNodesRecord {
  return {
    rep,
    topology: 'three-node',
    storm: { node: 'three-worker', peakUsageBytes: 128 * MiB, peakWorkingSetBytes: 121.5 * MiB, oomKills: o.stormOom, restarts: o.stormOom },
    quiet: {
      node: 'three-worker2',
      peakWorkingSetBytes: 31.25 * MiB,
      peakUsageBytes: 40 * MiB,
      oomKills: 0,
      restarts: 0,
      bystanders: { calls: 40, ok: 38, successRatio: 0.95 },
    },
    server: o.server
      ? {
          node: 'three-control-plane',
          pod: 'spire-server-7d9',
          cpuSeconds: 1.234,
          peakCores: 0.31,
          peakWorkingSetBytes: 52 * MiB,
          attestations: o.attestations,
        }
      : { node: 'three-control-plane', pod: null, cpuSeconds: null, peakCores: null, peakWorkingSetBytes: null, attestations: null },
  };
}

let parent: string;
let html: string;
let md: string;
let plainHtml: string;

beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'attestorm-cluster-section-'));
  const dir = await writeFixtureRun({ parent, name: 'three' });
  const file = path.join(dir, 'results.json');
  const results = JSON.parse(await readFile(file, 'utf8'));
  results.variants[0].cluster = [record(1, { stormOom: 0, attestations: null, server: false })];
  results.variants[2].cluster = [
    record(1, { stormOom: 2, attestations: { total: 5, duringLoad: 3, byNode: { 'three-worker': 4, 'three-worker2': 1 } }, server: true }),
    record(2, { stormOom: 1, attestations: null, server: true }),
  ];
  await writeFile(file, JSON.stringify(results));
  await renderReports(dir, { formats: ['html', 'md'] });
  html = await readFile(path.join(dir, 'report.html'), 'utf8');
  md = await readFile(path.join(dir, 'summary.md'), 'utf8');
  const plain = await writeFixtureRun({ parent, name: 'plain' });
  await renderReports(plain, { formats: ['html', 'md'] });
  plainHtml = await readFile(path.join(plain, 'report.html'), 'utf8');
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

describe('the cluster section', () => {
  it('shows storm node | quiet node | server in the HTML, one row per variant and repetition', () => {
    const table = /<table class="cards" data-testid="cluster">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? '';
    expect(table).toMatch(/colspan="4" class="group">storm node<.*colspan="4" class="group">quiet node<.*colspan="5" class="group">server</s);
    const rows = [...table.matchAll(/<tr( class="[^"]*")?>(<th scope="row"[\s\S]*?)<\/tr>/g)].map((m) => m[2]!.replace(/<[^>]+>/g, '|').replace(/\|+/g, '|'));
    expect(rows).toEqual([
      '|pre-attestation|three-worker|128.0|121.5|0 / 0|three-worker2|31.3|0 / 0|95% (38/40)|three-control-plane|—|—|—|no server|',
      '|disabled|three-worker|128.0|121.5|2 / 2|three-worker2|31.3|0 / 0|95% (38/40)|three-control-plane|1.23|0.31|52.0|5 (3 during the load; three-worker 4, three-worker2 1)|',
      '|disabled r2|three-worker|128.0|121.5|1 / 1|three-worker2|31.3|0 / 0|95% (38/40)|three-control-plane|1.23|0.31|52.0|—|',
    ]);
  });

  it('is a Markdown table with the group in each header in summary.md', () => {
    expect(md).toContain('**Cluster**: Three nodes side by side');
    expect(md).toContain('| variant | storm node: node | storm node: agent peak usage (MiB) |');
    expect(md).toContain(
      '| disabled | three-worker | 128.0 | 121.5 | 2 / 2 | three-worker2 | 31.3 | 0 / 0 | 95% (38/40) | three-control-plane | 1.23 | 0.31 | 52.0 |',
    );
  });

  it('is absent from a run without three nodes', () => {
    expect(plainHtml).not.toContain('data-testid="cluster"');
  });
});
