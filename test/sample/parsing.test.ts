import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Cgroup, CgroupReadError } from '../../src/cgroup/index.js';
import {
  CpuAccumulator,
  cgroupMemorySampler,
  metricsSampleFrom,
  NdjsonWriter,
  parseCpuacctUsage,
  parseCpuStatV2,
  parseNdjson,
  parseProcStatCpuSeconds,
  parseProcStatus,
  parsePrometheusText,
  processMemorySampler,
  SamplerLoop,
  sumByLabel,
  sumMetric,
} from '../../src/sample/index.js';

const dirs: string[] = [];
/** A fixture base directory; as a v2 parent it offers the controllers a kernel's would (cgroup.controllers). */
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'attestorm-sample-'));
  writeFileSync(join(d, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function files(dir: string, entries: Record<string, string>): void {
  for (const [k, v] of Object.entries(entries)) writeFileSync(join(dir, k), v);
}

describe('cgroup memory sampler on fixture files', () => {
  it('reads v1 usage, RSS, max_usage as the peak, oom_kill and the limit', () => {
    const base = tmp();
    const cg = Cgroup.create({ version: 'v1', memoryBase: base, cpuBase: null }, 'agent');
    files(cg.path, {
      'memory.usage_in_bytes': '50000000\n',
      'memory.max_usage_in_bytes': '90000000\n',
      'memory.limit_in_bytes': '134217728\n',
      'memory.oom_control': 'oom_kill_disable 0\nunder_oom 0\noom_kill 2\n',
      'memory.stat': 'cache 100\nrss 4000\ntotal_cache 100\ntotal_rss 40000000\n',
    });
    const s = cgroupMemorySampler({ cgroup: cg, pid: () => null })!;
    const line = s.sample(1234) as any;
    expect(line).toEqual({
      kind: 'memory',
      t: 1234,
      usageBytes: 50000000,
      workingSetBytes: null,
      rssBytes: 40000000,
      // No total_active_file or total_shmem line, no memory.kmem.usage_in_bytes: not available.
      kernelBytes: null,
      activeFileBytes: null,
      shmemBytes: null,
      peakBytes: 90000000,
      limitBytes: 134217728,
      cpuSeconds: null,
      // No memory.failcnt in the fixture: the hits are not known.
      limitHits: null,
    });
    expect(cg.readMemory().oomKills).toBe(2);
    // With memory+swap limited too, v1 counts no hit: not known either, never 0.
    files(cg.path, { 'memory.failcnt': '7\n' });
    expect(cg.readMemory().limitHits).toBe(7);
    files(cg.path, { 'memory.memsw.limit_in_bytes': '134217728\n' });
    expect(cg.readMemory().limitHits).toBeNull();
  });

  it('reads v2 memory.current, memory.peak, anon, memory.events and cpu.stat', () => {
    const base = tmp();
    const cg = Cgroup.create({ version: 'v2', memoryBase: base, cpuBase: null }, 'agent');
    files(cg.path, {
      'memory.current': '1000\n',
      'memory.peak': '5000\n',
      'memory.max': 'max\n',
      'memory.events': 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n',
      'memory.stat': 'anon 800\nfile 200\n',
      'cpu.stat': 'usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n',
    });
    const s = cgroupMemorySampler({ cgroup: cg, limitBytes: 777 });
    const line = s.sample(0) as any;
    expect(line).toMatchObject({ usageBytes: 1000, rssBytes: 800, peakBytes: 5000, limitBytes: 777, cpuSeconds: 2.5 });
    expect(cg.readMemory().oomKills).toBe(1);
  });

  it('an unreadable usage file is a failed reading naming the file, never a peak of 0', () => {
    const base = tmp();
    const cg = Cgroup.create({ version: 'v1', memoryBase: base, cpuBase: null }, 'gone');
    files(cg.path, { 'memory.limit_in_bytes': '1000' });
    const s = cgroupMemorySampler({ cgroup: cg });
    expect(() => s.sample(0)).toThrow(`cannot read ${cg.path}/memory.usage_in_bytes: ENOENT`);
  });

  // readMemory itself, not only the sampler, is what the targets, faults and the supervisor read.
  it.each([
    ['v1', 'memory.usage_in_bytes'],
    ['v1', 'memory.oom_control'],
    ['v1', 'memory.limit_in_bytes'],
    ['v2', 'memory.current'],
    ['v2', 'memory.events'],
    ['v2', 'memory.max'],
  ] as const)('readMemory (%s) throws naming %s when it is missing or unreadable, never reads 0', (version, name) => {
    const all: Record<string, string> =
      version === 'v1'
        ? { 'memory.usage_in_bytes': '4096', 'memory.max_usage_in_bytes': '8192', 'memory.limit_in_bytes': '65536', 'memory.oom_control': 'oom_kill 3\n' }
        : { 'memory.current': '4096', 'memory.peak': '8192', 'memory.max': '65536', 'memory.events': 'oom_kill 3\n' };
    const cg = Cgroup.create({ version, memoryBase: tmp(), cpuBase: null }, 'agent');
    files(cg.path, Object.fromEntries(Object.entries(all).filter(([k]) => k !== name)));
    expect(() => cg.readMemory()).toThrow(CgroupReadError);
    expect(() => cg.readMemory()).toThrow(`cannot read ${join(cg.path, name)}: ENOENT`);
    // Root reads through file modes, so "unreadable" is a directory where the file belongs (EISDIR).
    mkdirSync(join(cg.path, name));
    expect(() => cg.readMemory()).toThrow(`cannot read ${join(cg.path, name)}: EISDIR`);
    // Garbage is not a number either.
    rmdirSync(join(cg.path, name));
    writeFileSync(join(cg.path, name), name.endsWith('control') || name.endsWith('events') ? 'oom_kill 3\n' : 'garbage\n');
    if (name.endsWith('control') || name.endsWith('events')) expect(cg.readMemory()).toMatchObject({ usageBytes: 4096, oomKills: 3 });
    else expect(() => cg.readMemory()).toThrow(`cannot read ${join(cg.path, name)}: not a number`);
  });

  it('a cgroup without the optional peak file reads a null peak, and the loop counts a failed reading', async () => {
    const cg = Cgroup.create({ version: 'v2', memoryBase: tmp(), cpuBase: null }, 'agent');
    files(cg.path, { 'memory.current': '4096', 'memory.max': 'max', 'memory.events': 'oom_kill 0\n' });
    expect(cg.readMemory()).toMatchObject({ usageBytes: 4096, peakBytes: null, limitBytes: null, oomKills: 0 });
    const file = join(tmp(), 'samples.ndjson');
    const writer = new NdjsonWriter(file);
    const sampler = cgroupMemorySampler({ cgroup: cg });
    const loop = new SamplerLoop([sampler], writer, () => 0);
    await loop.tick(sampler);
    rmSync(join(cg.path, 'memory.current'));
    await loop.stop();
    writer.close();
    expect(loop.errors()).toEqual({ 'cgroup-memory': { count: 1, first: `cannot read ${join(cg.path, 'memory.current')}: ENOENT` } });
    expect(loop.peaks()).toEqual({ usageBytes: 4096, workingSetBytes: null, rssBytes: null });
  });

  it('never lets the reported peak go down when the kernel mark is reset', () => {
    const base = tmp();
    const cg = Cgroup.create({ version: 'v1', memoryBase: base, cpuBase: null }, 'a');
    files(cg.path, {
      'memory.usage_in_bytes': '10',
      'memory.max_usage_in_bytes': '900',
      'memory.limit_in_bytes': '1000',
      'memory.oom_control': 'oom_kill 0\n',
    });
    const s = cgroupMemorySampler({ cgroup: cg });
    expect((s.sample(0) as any).peakBytes).toBe(900);
    files(cg.path, { 'memory.max_usage_in_bytes': '20' });
    expect((s.sample(100) as any).peakBytes).toBe(900);
  });
});

describe('procfs parsing', () => {
  it('parses VmRSS and VmHWM in kB', () => {
    const text = 'Name:\tnode\nVmPeak:\t 999 kB\nVmHWM:\t   2048 kB\nVmRSS:\t   1024 kB\n';
    expect(parseProcStatus(text)).toEqual({ rssBytes: 1024 * 1024, hwmBytes: 2048 * 1024 });
    expect(parseProcStatus('Name:\tzombie\nState:\tZ\n')).toBeNull();
  });

  it('parses utime+stime even when comm has spaces and parentheses', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i));
    fields[11] = '250'; // utime (field 14)
    fields[12] = '50'; // stime (field 15)
    const text = `4242 (my (odd) proc) ${fields.join(' ')}`;
    expect(parseProcStatCpuSeconds(text)).toBe(3);
    expect(parseProcStatCpuSeconds('garbage')).toBeNull();
  });

  it('parses cgroup CPU counters of both versions', () => {
    expect(parseCpuStatV2('usage_usec 1500000\nuser_usec 1\n')).toBe(1.5);
    expect(parseCpuacctUsage('2000000000\n')).toBe(2);
    expect(parseCpuacctUsage('x')).toBeNull();
  });

  it('accumulates CPU seconds across restarts', () => {
    const acc = new CpuAccumulator();
    expect(acc.update(null, null)).toBeNull();
    expect(acc.update(10, 1)).toBe(1);
    expect(acc.update(10, 2)).toBe(2);
    expect(acc.update(11, 0.5)).toBe(2.5);
    expect(acc.update(null, null)).toBe(2.5);
  });

  it('samples this very process by PID', () => {
    const s = processMemorySampler({ pid: () => process.pid, limitBytes: 1 << 30 });
    const line = s.sample(5) as any;
    expect(line.kind).toBe('memory');
    expect(line.rssBytes).toBeGreaterThan(1 << 20);
    expect(line.peakBytes).toBeGreaterThanOrEqual(line.rssBytes);
    expect(line.limitBytes).toBe(1 << 30);
    expect(processMemorySampler({ pid: () => null }).sample(0)).toBeNull();
  });
});

describe('Prometheus text', () => {
  const text = [
    '# HELP workload_api_attestations_inflight Workload attestations running now',
    '# TYPE workload_api_attestations_inflight gauge',
    'workload_api_attestations_inflight 17',
    'workload_api_open_connections 250',
    'workload_api_rate_limit_exceeded_total{method="FetchJWTSVID",key_type="pod_uid"} 1200',
    'workload_api_rate_limit_exceeded_total{method="FetchX509SVID",key_type="pod_uid"} 3',
    'workload_api_rate_limit_exceeded_total{method="FetchJWTSVID",key_type="os_uid"} 7',
    'workload_api_kubelet_fetches_total{outcome="ok"} 40',
    'workload_api_kubelet_fetches_total{outcome="error"} 2',
    'odd_metric{path="a\\"b,c}",x="y"} 1.5e3 1700000000000',
    'weird{broken 5',
    'inf_metric +Inf',
  ].join('\n');

  it('parses names, labels with escapes and commas, values and timestamps', () => {
    const samples = parsePrometheusText(text);
    const odd = samples.find((s) => s.name === 'odd_metric')!;
    expect(odd.labels).toEqual({ path: 'a"b,c}', x: 'y' });
    expect(odd.value).toBe(1500);
    expect(samples.find((s) => s.name === 'weird')).toBeUndefined();
    expect(sumMetric(samples, 'inf_metric')).toBe(Infinity);
    expect(sumMetric(samples, 'missing')).toBeNull();
    expect(sumMetric(samples, 'workload_api_kubelet_fetches_total', { outcome: 'ok' })).toBe(40);
    expect(sumByLabel(samples, 'workload_api_rate_limit_exceeded_total', 'key_type')).toEqual({ pod_uid: 1203, os_uid: 7 });
  });

  it('turns a scrape into a metrics sample', () => {
    expect(metricsSampleFrom(3000, parsePrometheusText(text))).toEqual({
      kind: 'metrics',
      t: 3000,
      inflightAttestations: 17,
      openConnections: 250,
      rejectedByKeyType: { pod_uid: 1203, os_uid: 7 },
      kubeletFetches: 42,
    });
  });
});

describe('NDJSON writer', () => {
  it('appends one line per sample at once and reads back past a torn last line', () => {
    const file = join(tmp(), 'pre-attestation.r1', 'samples.ndjson');
    const w = new NdjsonWriter(file);
    expect(readFileSync(file, 'utf8')).toBe('');
    writeFileSync(file, 'stale\n');
    new NdjsonWriter(file);
    expect(readFileSync(file, 'utf8')).toBe('');
    w.write({ kind: 'event', t: -5, type: 'agent-start' });
    w.write({ kind: 'memory', t: 0, usageBytes: 1, rssBytes: null, peakBytes: 2, limitBytes: 3, cpuSeconds: null });
    // Visible on disk before close: an interrupted run keeps it.
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
    w.close();
    w.write({ kind: 'event', t: 1, type: 'note' });
    expect(w.lines).toBe(2);
    const text = readFileSync(file, 'utf8') + '{"kind":"memo';
    expect(parseNdjson(text).map((l) => l.kind)).toEqual(['event', 'memory']);
  });
});

describe('existing cgroups (external agents)', () => {
  it('opens a v1 or v2 memory cgroup read-only, and refuses other directories', async () => {
    const { openExistingCgroup } = await import('../../src/sample/index.js');
    const v2 = tmp();
    files(v2, { 'memory.current': '4096', 'memory.peak': '8192', 'memory.max': 'max', 'memory.events': 'oom_kill 0\n' });
    const cg = openExistingCgroup(v2)!;
    expect(cg.version).toBe('v2');
    expect(cg.readMemory()).toMatchObject({ usageBytes: 4096, peakBytes: 8192, limitBytes: null });
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(v2).sort()).toEqual(['cgroup.controllers', 'memory.current', 'memory.events', 'memory.max', 'memory.peak']);
    const v1 = tmp();
    files(v1, { 'memory.usage_in_bytes': '1' });
    expect(openExistingCgroup(v1)!.version).toBe('v1');
    expect(openExistingCgroup(tmp())).toBeNull();
  });
});
