// Which memory sampler an agent gets: its cgroup's figures when it has one (usage, peak, OOM
// kills), else its process's (VmRSS, VmHWM).
import type { Cgroup } from '../cgroup/index.js';
import { createSampler, type Sampler } from '../sample/index.js';

export function memorySampler(cgroup: Cgroup | null, pid: () => number | null, limitBytes: number): Sampler {
  return cgroup ? createSampler('cgroup-memory', { cgroup, pid, limitBytes }) : createSampler('process-memory', { pid, limitBytes });
}
