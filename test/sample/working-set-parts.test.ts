// What the working set holds beside RSS — kernel memory, active file pages, shared memory — from
// real v1 and v2 memory.stat texts, through both readers, to the peak's breakdown in results.json and
// the sentence in summary.md, report.html and the terminal table.
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Cgroup, memoryStatParts, parseFlatKeyed } from '../../src/cgroup/index.js';
import { PeakTracker, workingSetPartsWords, type MemorySample, type WorkingSetParts } from '../../src/contract/index.js';
import { readCgroupMemory } from '../../src/kube/index.js';
import { renderReports } from '../../src/report/index.js';
import { aggregateVariant, comparisonTable, newMeasurement, type RepMeasurement } from '../../src/scenario/index.js';
import { writeFixtureRun } from '../report/fixture.js';
import { cgroupFixtureBases, v1MemoryFiles, v2MemoryFiles, writeCgroupFiles } from '../support/cgroup-fixture.js';

const MiB = 2 ** 20;

// A kind node's pod cgroup on this project's v1 host (kernel 6.18), as read: memory.usage_in_bytes
// 635064320, memory.kmem.usage_in_bytes 62664704.
const V1_STAT = `cache 159744
rss 1306624
rss_huge 0
shmem 4096
mapped_file 0
dirty 0
writeback 0
workingset_refault_anon 0
workingset_refault_file 23
swap 0
swapcached 0
pgpgin 24803
pgpgout 24463
pgfault 40903
pgmajfault 0
inactive_anon 1306624
active_anon 4096
inactive_file 24576
active_file 131072
unevictable 0
hierarchical_memory_limit 9223372036854771712
hierarchical_memsw_limit 9223372036854771712
total_cache 497147904
total_rss 74473472
total_rss_huge 0
total_shmem 401408
total_mapped_file 57556992
total_dirty 4096
total_writeback 0
total_workingset_refault_anon 0
total_workingset_refault_file 36750
total_swap 0
total_swapcached 0
total_pgpgin 1557450
total_pgpgout 1467878
total_pgfault 1996458
total_pgmajfault 172
total_inactive_anon 74588160
total_active_anon 253952
total_inactive_file 323993600
total_active_file 172761088
total_unevictable 24576
`;
const V1_USAGE = 635064320;
const V1_KMEM = 62664704;

// v2 as a 6.x kernel writes it (Documentation/admin-guide/cgroup-v2.rst, memory.stat): `kernel`
// holds slab, stacks, page tables and percpu; `sock` is charged beside it.
const V2_STAT = `anon 223248384
file 8388608
kernel 26214400
kernel_stack 1966080
pagetables 3145728
sec_pagetables 0
percpu 524288
sock 13631488
vmalloc 65536
shmem 409600
zswap 0
zswapped 0
file_mapped 2097152
file_dirty 0
file_writeback 0
swapcached 0
anon_thp 0
file_thp 0
shmem_thp 0
inactive_anon 223657984
active_anon 0
inactive_file 3932160
active_file 4046848
unevictable 0
slab_reclaimable 5242880
slab_unreclaimable 15335424
slab 20578304
workingset_refault_anon 0
workingset_refault_file 0
pgfault 120000
pgmajfault 0
`;
// usage = anon + file + kernel + sock
const V2_USAGE = 223248384 + 8388608 + 26214400 + 13631488;
// A 5.10 kernel's v2 memory.stat has no `kernel` line: its parts are summed.
const V2_STAT_5_10 = `anon 41943040
file 6291456
kernel_stack 393216
percpu 131072
sock 1048576
shmem 0
file_mapped 0
inactive_anon 41943040
active_anon 0
inactive_file 4194304
active_file 2097152
unevictable 0
slab_reclaimable 524288
slab_unreclaimable 1572864
slab 2097152
`;

const tmp = cgroupFixtureBases('attestorm-wsparts-');
const files = writeCgroupFiles;
const v1Files = (kmem: string | null): Record<string, string> => ({
  ...v1MemoryFiles(V1_USAGE, V1_STAT, 1024 * MiB),
  ...(kmem === null ? {} : { 'memory.kmem.usage_in_bytes': kmem }),
});

describe('the parts of the working set from memory.stat', () => {
  it('v1: kmem from its own counter, active file and shmem from the hierarchical total_* lines', () => {
    expect(memoryStatParts('v1', parseFlatKeyed(V1_STAT), V1_KMEM)).toEqual({
      kernelBytes: V1_KMEM,
      activeFileBytes: 172761088,
      shmemBytes: 401408,
    });
  });

  it('v1 without kernel-memory accounting (no file, or 0): kernel memory not available, never 0', () => {
    expect(memoryStatParts('v1', parseFlatKeyed(V1_STAT), null).kernelBytes).toBeNull();
    expect(memoryStatParts('v1', parseFlatKeyed(V1_STAT), 0).kernelBytes).toBeNull();
  });

  it('v2: kernel plus sock; a kernel without the `kernel` line sums slab, stacks, page tables, percpu and sock', () => {
    expect(memoryStatParts('v2', parseFlatKeyed(V2_STAT))).toEqual({ kernelBytes: 26214400 + 13631488, activeFileBytes: 4046848, shmemBytes: 409600 });
    expect(memoryStatParts('v2', parseFlatKeyed(V2_STAT_5_10)).kernelBytes).toBe(2097152 + 393216 + 131072 + 1048576);
    expect(memoryStatParts('v2', parseFlatKeyed('anon 4096\n'))).toEqual({ kernelBytes: null, activeFileBytes: null, shmemBytes: null });
  });

  it.each([
    ['with', `${V1_KMEM}\n`, V1_KMEM],
    ['without', null, null],
  ] as const)('both readers agree on a v1 cgroup %s kernel-memory accounting', (_, kmem, kernelBytes) => {
    const cg = Cgroup.create({ version: 'v1', memoryBase: tmp(), cpuBase: null }, 'agent');
    files(cg.path, v1Files(kmem));
    const want = { workingSetBytes: V1_USAGE - 323993600, rssBytes: 74473472, kernelBytes, activeFileBytes: 172761088, shmemBytes: 401408 };
    expect(cg.readMemory()).toMatchObject(want);
    expect(readCgroupMemory(cg.path, 'v1')).toMatchObject(want);
  });

  it('both readers agree on a v2 cgroup, and the parts add up to its working set', () => {
    const cg = Cgroup.create({ version: 'v2', memoryBase: tmp(), cpuBase: null }, 'agent');
    files(cg.path, v2MemoryFiles(V2_USAGE, V2_STAT, 256 * MiB));
    const m = cg.readMemory();
    expect(readCgroupMemory(cg.path, 'v2')).toMatchObject({ kernelBytes: m.kernelBytes, activeFileBytes: m.activeFileBytes, shmemBytes: m.shmemBytes });
    // working set = anon + kernel + sock + (file − inactive_file), and file = active + inactive + shmem here.
    expect(m.workingSetBytes).toBe(m.rssBytes! + m.kernelBytes! + m.activeFileBytes! + m.shmemBytes!);
  });
});

const sample = (t: number, ws: number, parts: Partial<MemorySample> = {}): MemorySample => ({
  kind: 'memory',
  t,
  usageBytes: ws + 10 * MiB,
  workingSetBytes: ws,
  rssBytes: ws - 40 * MiB,
  peakBytes: ws + 10 * MiB,
  limitBytes: 256 * MiB,
  cpuSeconds: null,
  ...parts,
});

describe('the breakdown at the peak', () => {
  it('keeps the parts of the highest working-set reading, and drops them when that reading has none', () => {
    const t = new PeakTracker();
    t.add(sample(100, 200 * MiB, { kernelBytes: 30 * MiB, activeFileBytes: 8 * MiB, shmemBytes: 2 * MiB }));
    t.add(sample(200, 250 * MiB, { kernelBytes: 36 * MiB, activeFileBytes: 3 * MiB, shmemBytes: MiB }));
    t.add(sample(300, 240 * MiB, { kernelBytes: 44 * MiB, activeFileBytes: 3 * MiB, shmemBytes: MiB }));
    expect(t.peaks().workingSetParts).toEqual({
      t: 200,
      workingSetBytes: 250 * MiB,
      rssBytes: 210 * MiB,
      kernelBytes: 36 * MiB,
      activeFileBytes: 3 * MiB,
      shmemBytes: MiB,
    });
    t.add(sample(400, 251 * MiB));
    expect(t.peaks().workingSetParts).toBeUndefined();
    expect(t.peaks().workingSetBytes).toBe(251 * MiB);
  });

  it("a variant's breakdown is the repetition's nearest the median peak, named", () => {
    const rep = (runDir: string, ws: number): RepMeasurement => {
      const t = new PeakTracker();
      t.add(sample(1000, ws, { kernelBytes: ws / 8, activeFileBytes: MiB, shmemBytes: 0 }));
      return { ...newMeasurement(runDir, 256 * MiB), peaks: t.peaks(), loadSeconds: 10, counts: { ok: 1, rateLimited: 0, deadlineExceeded: 0, error: 0 } };
    };
    const v = aggregateVariant(
      'post',
      { kind: 'spire', placement: 'post-attestation', key: null },
      [rep('post.r1', 200 * MiB), rep('post.r2', 230 * MiB), rep('post.r3', 250 * MiB)],
      () => null,
    );
    expect(v.peaks.workingSetParts).toMatchObject({ runDir: 'post.r2', workingSetBytes: 230 * MiB, kernelBytes: (230 * MiB) / 8 });
  });
});

describe('the breakdown in words', () => {
  const parts: WorkingSetParts = {
    t: 41_300,
    workingSetBytes: 254.8 * MiB,
    rssBytes: 212.9 * MiB,
    kernelBytes: 38 * MiB,
    activeFileBytes: 3.5 * MiB,
    shmemBytes: 0.4 * MiB,
  };

  it('names every part in MiB and what is left unattributed', () => {
    expect(workingSetPartsWords(parts)).toBe('254.8 MiB working set = 212.9 RSS + 38.0 kernel + 3.9 file pages (3.5 active file, 0.4 shmem)');
    expect(workingSetPartsWords({ ...parts, workingSetBytes: 255.1 * MiB })).toBe(
      '254.8 MiB working set = 212.9 RSS + 38.0 kernel + 3.9 file pages (3.5 active file, 0.4 shmem) + 0.3 unattributed'.replace('254.8', '255.1'),
    );
  });

  it('says kernel memory is not available rather than 0, and leaves it in the rest', () => {
    expect(workingSetPartsWords({ ...parts, kernelBytes: null })).toBe(
      '254.8 MiB working set = 212.9 RSS + 3.9 file pages (3.5 active file, 0.4 shmem) + 38.0 unattributed (kernel not available: no kernel-memory accounting on the cgroup)',
    );
  });

  it('reaches summary.md, report.html and the terminal table; nothing is shown where no sampler read the parts', async () => {
    const parent = tmp();
    const dir = await writeFixtureRun({ parent, name: 'parts' });
    const file = join(dir, 'results.json');
    const results = JSON.parse(await readFile(file, 'utf8'));
    results.variants[1].peaks.workingSetParts = parts;
    writeFileSync(file, JSON.stringify(results));
    await renderReports(dir, { outDir: dir, formats: ['md', 'html'] });
    const sentence = `post-attestation: ${workingSetPartsWords(parts)} (41.3 s after the load started)`;
    const md = await readFile(join(dir, 'summary.md'), 'utf8');
    expect(md).toContain(`The working set at its highest reading, in MiB: ${sentence}.`);
    expect(md).not.toContain('pre-attestation: 2');
    const html = await readFile(join(dir, 'report.html'), 'utf8');
    expect(html).toMatch(
      /<p class="meta" data-testid="working-set-parts">The working set at its highest reading, in MiB: post-attestation: 254\.8 MiB working set = 212\.9 RSS \+ 38\.0 kernel/,
    );
    expect(comparisonTable(results, { width: 400 })).toContain(`post-attestation: ${workingSetPartsWords(parts)}`);
    delete results.variants[1].peaks.workingSetParts;
    writeFileSync(file, JSON.stringify(results));
    await renderReports(dir, { outDir: dir, formats: ['md'] });
    expect(await readFile(join(dir, 'summary.md'), 'utf8')).not.toContain('highest reading');
  });
});
