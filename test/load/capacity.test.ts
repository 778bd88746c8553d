// A worker count the machine cannot hold is refused before anything starts, with the numbers:
// memory, process/thread IDs and file descriptors. The rules are checked on host figures written
// for the case (the real limits cannot be lowered on demand, except RLIMIT_NOFILE, which the CLI
// cases below lower for real with prlimit).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, EXIT } from '../../src/errors.js';
import { capacityProblems, checkLoadCapacity, loadPlanSize, readHostCapacity, type HostCapacity } from '../../src/load/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';
import { useListeningSocket } from '../support/listening-socket.js';

const MiB = 1024 * 1024;
/** A roomy host: every limit far above what the cases ask. */
const roomy: HostCapacity = {
  memoryAvailableBytes: 20_000 * MiB,
  memorySource: 'MemAvailable in /proc/meminfo',
  tasks: 500,
  pidMax: 4_194_304,
  threadsMax: 190_000,
  pidsCgroup: null,
  nofile: { soft: 1024, hard: 1_048_576 },
  fileMax: 9_000_000,
  filesAllocated: 5000,
};

const storm = (client: 'native' | 'h2', pods: number, workersPerPod: number) => loadPlanSize({ client, pods, workersPerPod });

describe('load capacity', () => {
  it('1,200 native workers fit a roomy host; the same count of h2 workers does not fit its memory', () => {
    expect(capacityProblems(storm('native', 4, 300), roomy)).toEqual([]);
    const problems = capacityProblems(storm('h2', 4, 300), roomy);
    expect(problems).toHaveLength(1);
    // 1200 × 30 MiB + 4 × 60 MiB = 36,240 MiB against 20,000 MiB.
    expect(problems[0]).toMatch(
      /^load\.workersPerPod: 4 pod processes and 1200 h2 workers need about 36240 MiB of memory .* but 20000 MiB is available \(MemAvailable in \/proc\/meminfo\); use fewer workers or client: native/,
    );
  });

  it('a pid limit: kernel.pid_max, kernel.threads-max and the pids cgroup, each with its numbers', () => {
    const tight: HostCapacity = {
      ...roomy,
      tasks: 900,
      pidMax: 1500,
      threadsMax: 1800,
      pidsCgroup: { path: '/sys/fs/cgroup/pids/job', max: 2000, current: 950 },
    };
    // 1200 native workers: 1200 threads + 4 pod processes × 7 = 1228.
    const [p] = capacityProblems(storm('native', 4, 300), tight);
    expect(p).toContain('need 1228 process/thread IDs');
    expect(p).toContain('kernel.pid_max is 1500 with 900 tasks running');
    expect(p).toContain('kernel.threads-max is 1800 with 900 tasks running');
    expect(p).toContain('the pids cgroup /sys/fs/cgroup/pids/job allows 2000 with 950 in use');
    expect(capacityProblems(storm('native', 1, 100), tight)).toEqual([]);
  });

  it('file descriptors: per pod process, in the agent, machine-wide', () => {
    const fds: HostCapacity = { ...roomy, nofile: { soft: 1024, hard: 1024 }, fileMax: 10_000, filesAllocated: 8000 };
    const plan = { ...loadPlanSize({ client: 'native', pods: 1, workersPerPod: 1000 }), agentHere: true };
    const problems = capacityProblems(plan, fds, 'scenario.load');
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(
      /^scenario\.load\.workersPerPod: a pod process of 1000 workers holds about 1064 file descriptors .* RLIMIT_NOFILE allows 1024 \(hard limit/,
    );
    expect(problems[1]).toMatch(/the agent under test holds a connection per calling worker, about 1064 file descriptors for 1000 workers/);
    expect(problems[2]).toMatch(/1000 workers open about 4000 file descriptors machine-wide .* fs.file-max is 10000 with 8000 allocated/);
    // Spread over pods, the same workers fit each pod process; the agent alone is not asked about.
    expect(capacityProblems(loadPlanSize({ client: 'native', pods: 4, workersPerPod: 250 }), { ...fds, fileMax: null })).toEqual([]);
  });

  it('bystanders and a burst count beside the storm', () => {
    const plan = loadPlanSize({ client: 'native', pods: 4, workersPerPod: 300, bystanders: { pods: 2, workersPerPod: 5 } }, { workers: 700 });
    expect(plan).toMatchObject({ pods: 4 + 2 + 3, workers: 1200 + 10 + 700, maxWorkersPerPod: 300 });
  });

  it('checkLoadCapacity throws a ConfigError (exit status 2) listing every problem', () => {
    const tiny: HostCapacity = { ...roomy, memoryAvailableBytes: 100 * MiB, nofile: { soft: 64, hard: 64 } };
    let err: unknown;
    try {
      checkLoadCapacity(storm('h2', 2, 10), 'load', tiny);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toHaveLength(2);
  });

  it('reads this machine: memory, tasks, pid limits and RLIMIT_NOFILE', () => {
    const host = readHostCapacity();
    expect(host.memoryAvailableBytes).toBeGreaterThan(0);
    expect(host.tasks).toBeGreaterThan(0);
    expect(host.pidMax).toBeGreaterThan(host.tasks!);
    expect(host.threadsMax).toBeGreaterThan(0);
    expect(host.nofile!.hard).toBeGreaterThanOrEqual(host.nofile!.soft);
    expect(host.fileMax).toBeGreaterThan(0);
  });

  it('reads the enclosing memory and pids cgroups, the tightest of each', () => {
    const root = mkdtempSync(join(tmpdir(), 'attestorm-capacity-'));
    try {
      const proc = join(root, 'proc');
      const cg = join(root, 'cgroup');
      mkdirSync(join(proc, 'self'), { recursive: true });
      mkdirSync(join(proc, 'sys', 'kernel'), { recursive: true });
      mkdirSync(join(proc, 'sys', 'fs'), { recursive: true });
      writeFileSync(join(proc, 'self', 'cgroup'), '8:pids:/job/step\n4:memory:/job/step\n1:cpu:/\n');
      writeFileSync(join(proc, 'meminfo'), 'MemTotal: 24000000 kB\nMemAvailable: 20000000 kB\n');
      writeFileSync(join(proc, 'loadavg'), '1.00 2.00 3.00 3/812 4242\n');
      writeFileSync(join(proc, 'sys', 'kernel', 'pid_max'), '32768\n');
      writeFileSync(join(proc, 'sys', 'kernel', 'threads-max'), '192726\n');
      writeFileSync(join(proc, 'sys', 'fs', 'file-nr'), '4421\t0\t2466116\n');
      writeFileSync(
        join(proc, 'self', 'limits'),
        'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 4096                 files\n',
      );
      const mem = (rel: string, limit: number, usage: number, inactive: number) => {
        mkdirSync(join(cg, 'memory', rel), { recursive: true });
        writeFileSync(join(cg, 'memory', rel, 'memory.limit_in_bytes'), `${limit}\n`);
        writeFileSync(join(cg, 'memory', rel, 'memory.usage_in_bytes'), `${usage}\n`);
        writeFileSync(join(cg, 'memory', rel, 'memory.stat'), `cache 0\ntotal_inactive_file ${inactive}\n`);
      };
      mem('', 2 ** 63 - 4096, 10 * 1024 * MiB, 0); // the root: unlimited
      mem('job', 2048 * MiB, 1500 * MiB, 500 * MiB); // 2048 − (1500 − 500) = 1048 MiB left
      mem('job/step', 4096 * MiB, 1000 * MiB, 0); // 3072 MiB left: not the tightest
      const pids = (rel: string, max: string, current: number) => {
        mkdirSync(join(cg, 'pids', rel), { recursive: true });
        writeFileSync(join(cg, 'pids', rel, 'pids.max'), `${max}\n`);
        writeFileSync(join(cg, 'pids', rel, 'pids.current'), `${current}\n`);
      };
      pids('job', '5000', 4000);
      pids('job/step', 'max', 300);
      const host = readHostCapacity({ proc, cgroupRoot: cg });
      expect(host.memoryAvailableBytes).toBe(1048 * MiB);
      expect(host.memorySource).toBe(`the limit of the memory cgroup ${join(cg, 'memory', 'job')} less its usage`);
      expect(host.pidsCgroup).toEqual({ path: join(cg, 'pids', 'job'), max: 5000, current: 4000 });
      expect(host).toMatchObject({ tasks: 812, pidMax: 32768, threadsMax: 192726, nofile: { soft: 1024, hard: 4096 }, fileMax: 2466116, filesAllocated: 4421 });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

// The CLI under a real, lowered RLIMIT_NOFILE (1000: node itself needs a few hundred to load its modules): refused with exit status 2 before a process starts.
const prlimit = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => existsSync(p));
describe.skipIf(!prlimit)('load capacity at the CLI', () => {
  if (!prlimit) skipNote('load capacity at the CLI', 'prlimit (util-linux) is not installed');
  const { dir, socket } = useListeningSocket('attestorm-capacity-cli-');
  const cli = (args: string[]) =>
    spawnSync(prlimit!, ['--nofile=1000:1000', process.execPath, join(PROJECT_ROOT, 'bin', 'attestorm.js'), ...args], {
      encoding: 'utf8',
      timeout: 120_000,
      cwd: PROJECT_ROOT,
    });

  it('attestorm load: 1,000 workers in one pod under a 1,000-descriptor limit', () => {
    const res = cli(['load', '--socket', socket, '--no-sandbox', '--pods', '1', '--workers', '1000', '--client', 'native', '--duration', '2s']);
    expect(res.stderr).toMatch(/a pod process of 1000 workers holds about 1064 file descriptors .* RLIMIT_NOFILE allows 1000/);
    expect(res.status).toBe(EXIT.INVALID_INPUT);
    // Nothing was connected: the refusal came before any worker.
    expect(res.stderr).not.toMatch(/calls/);
  }, 120_000);

  it('attestorm run: the seed scenario under the same limit, before a run folder exists', () => {
    const out = join(dir, 'run');
    const res = cli(['run', join(PROJECT_ROOT, 'scenarios', 'seed-256mi-4x300.yaml'), '--out', out]);
    expect(res.stderr).toMatch(/the agent under test holds a connection per calling worker, about 1264 file descriptors for 1200 workers/);
    expect(res.status).toBe(EXIT.INVALID_INPUT);
    expect(existsSync(out)).toBe(false);
  }, 120_000);
});
