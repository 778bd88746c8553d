// How a sandbox gets its cgroups: the run's root below the writable hierarchy, or the reason there is
// none, announced once per process, after which pods run in uid-only fidelity.
import { join } from 'node:path';
import { Cgroup, detectCgroupHost, type CgroupHost } from '../cgroup/index.js';
import { PlatformError } from '../errors.js';
import type { ResolvedSandboxOptions } from './options.js';
import { runCgroupRel } from './run-id.js';

export interface CgroupSetup {
  host: CgroupHost;
  root: Cgroup;
}

// The fallback to uid-only fidelity is announced once per process, not once per sandbox.
let fidelityWarned = false;

/** The run's cgroup root, or null (uid-only) with the reason; PlatformError when "always" cannot be met. */
export function setUpCgroups(opts: ResolvedSandboxOptions): { setup: CgroupSetup | null; reason: string } {
  const { host, reason } = opts.useCgroups === 'never' ? { host: null, reason: 'sandbox.useCgroups is "never"' } : detectCgroupHost();
  let why = reason;
  if (host) {
    try {
      return { setup: { host, root: Cgroup.create(host, runCgroupRel(opts.runId), { cpu: host.cpuBase !== null }) }, reason };
    } catch (err) {
      why = `cannot create cgroup ${join(host.memoryBase, runCgroupRel(opts.runId))}: ${(err as Error).message}`;
    }
  }
  if (opts.useCgroups === 'always') throw new PlatformError(`sandbox.useCgroups is "always" but ${why}`);
  if (!fidelityWarned) {
    fidelityWarned = true;
    process.stderr.write(`attestorm: pods run without cgroups (uid-only fidelity: an agent sees OS UIDs, not pods): ${why}\n`);
  }
  return { setup: null, reason: why };
}
