// The report's "SPIRE live heap by owner" table: from the heap profiles in a repetition's folder
// (older run folders) or from results.json's spireHeap (as the runner writes it), only for the
// variants that have profiles.
import { copyFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReports } from '../../src/report/index.js';
import type { RunResults } from '../../src/contract/index.js';
import { writeFixtureRun } from './fixture.js';

const HEAP = path.join(import.meta.dirname, '..', 'spire', 'fixtures', 'heap');
let parent: string;
beforeAll(async () => {
  parent = await mkdtemp(path.join(tmpdir(), 'attestorm-heap-table-'));
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

async function render(dir: string): Promise<{ md: string; html: string }> {
  const { files } = await renderReports(dir, { formats: ['md', 'html'] });
  const read = (ext: string) =>
    readFile(
      files.find((f) => f.endsWith(ext))!,
      'utf8',
    );
  return { md: await read('.md'), html: await read('.html') };
}

describe('SPIRE live heap by owner in the reports', () => {
  it('sums the profiles of a repetition folder into one row for that variant alone', async () => {
    const dir = await writeFixtureRun({ parent, name: 'with-profiles' });
    copyFileSync(path.join(HEAP, 'main-off--4999ms.pb.gz'), path.join(dir, 'disabled.r1', 'spire-heap--4999ms.pb.gz'));
    copyFileSync(path.join(HEAP, 'main-off-145003ms.pb.gz'), path.join(dir, 'disabled.r1', 'spire-heap-145003ms.pb.gz'));
    copyFileSync(path.join(HEAP, 'main-pre-235034ms.pb.gz'), path.join(dir, 'disabled.r1', 'spire-heap-295003ms.pb.gz'));
    const { md, html } = await render(dir);
    const lines = md.split('\n');
    const at = lines.indexOf('**SPIRE live heap by owner (largest profile)**');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 2]).toBe(
      '| variant | at (s) | live heap (MiB) | pod lists | log entries | read buffers | gRPC client | gRPC transport | goroutines | calls | other | last profile at (s) | its live heap (MiB) | profiles |',
    );
    // pprof: 238.93 MB live at 145 s, bufio.NewReaderSize 43.66 MB, fastjson 23.43 MB; the last profile 54.31 MB.
    expect(lines[at + 4]).toBe('| disabled | 145 | 238.9 | 23.4 | 16.0 | 43.7 | 49.0 | 65.9 | 3.0 | 30.0 | 7.8 | 295 | 54.3 | 3 |');
    expect(lines[at + 5]).toBe('');
    expect(md).toMatch(/read buffers = per-connection read buffers \(bufio under gRPC transport\)/);
    expect(html).toContain('<h3>SPIRE live heap by owner (largest profile)</h3>');
    expect(html).toMatch(
      /<table class="cards" data-testid="spire-heap">.*<th scope="row" data-label="variant">disabled<\/th><td data-label="at \(s\)" class="num">145<\/td><td data-label="live heap \(MiB\)" class="num">238.9<\/td>/s,
    );
  });

  it('shows what results.json records, a row per repetition when there are several', async () => {
    const dir = await writeFixtureRun({ parent, name: 'recorded' });
    const file = path.join(dir, 'results.json');
    const results = JSON.parse(await readFile(file, 'utf8')) as RunResults;
    const zero = { 'pod-list': 0, 'read-buffers': 0, 'grpc-transport': 0, 'grpc-client': 0, 'log-entries': 0, calls: 0, goroutines: 0, other: 0 };
    const summary = (atMs: number, mib: number) => ({
      file: `spire-heap-${atMs}ms.pb.gz`,
      atMs,
      totalBytes: mib * 2 ** 20,
      byOwner: { ...zero, 'pod-list': mib * 2 ** 20 },
    });
    results.variants[0]!.spireHeap = [
      { rep: 1, profiles: 2, largest: summary(30_000, 20), last: summary(60_000, 10) },
      { rep: 2, profiles: 2, largest: summary(60_000, 22), last: summary(60_000, 22) },
    ];
    await writeFile(file, JSON.stringify(results));
    const { md } = await render(dir);
    const name = results.variants[0]!.name;
    expect(md).toContain(`| ${name} r1 | 30 | 20.0 | 20.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 60 | 10.0 | 2 |`);
    expect(md).toContain(`| ${name} r2 | 60 | 22.0 | 22.0 |`);
  });

  it('has no such table for a run without heap profiles', async () => {
    const { md, html } = await render(await writeFixtureRun({ parent, name: 'none' }));
    expect(md).not.toContain('SPIRE live heap');
    expect(html).not.toContain('SPIRE live heap');
  });
});
