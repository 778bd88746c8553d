// Local mode on cgroup v2, for real: the runner in a QEMU guest (Debian's kernel, cgroup2 only)
// placed as users' hosts place it — a CI runner's service without systemd, a login session through
// sudo, a system service, a logged-in user without root, a container — runs a small storm and must
// take a delegated subtree, apply every limit, read every peak, see the kernel's OOM kill and leave
// no cgroup behind. `npm run test:vm`; skips with the reason where the host cannot boot a guest.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunResults, VariantResult } from '../../src/contract/index.js';
import { bootGuest, vmUnavailableReason, warmBundles, type Flavour, type GuestResult, type Placement } from './guest.js';
import { containerJob, explain, killedRunJob, lines, results, runJob, SMALL } from './jobs.js';

const MiB = 1024 * 1024;
/** fixtures/v2-small.yaml's agent.memoryLimit, and the line the job samples from each agent cgroup: memory.max, then memory.swap.max. */
const LIMIT = 160 * MiB;
const LIMIT_LINE = new RegExp(` ${LIMIT} 0$`);
/** Boot, a run of two variants under emulation and the power-off, with room for a slow host. */
const JOB_MS = 12 * 60_000;

const unavailable = { minimal: vmUnavailableReason('minimal'), systemd: vmUnavailableReason('systemd') };
for (const [flavour, reason] of Object.entries(unavailable)) if (reason) console.log(`test/vm: the ${flavour} guest's tests skip: ${reason}`);

beforeAll(async () => {
  if (!unavailable.minimal || !unavailable.systemd) await warmBundles();
});

function guest(flavour: Flavour, placement: Placement, job: string): Promise<GuestResult> {
  return bootGuest({ flavour, placement, job, timeoutMs: JOB_MS });
}

function variant(res: RunResults, name: string): VariantResult {
  const v = res.variants.find((x) => x.name === name);
  if (!v) throw new Error(`no variant ${name} in results.json (${res.variants.map((x) => x.name).join(', ')})`);
  return v;
}

/** Every limit applied and every peak read on v2, the kernel's OOM kill seen where one happened, nothing left. */
function expectRealV2Run(r: GuestResult, delegation: string): RunResults {
  const why = explain(r);
  expect(r.exitCode, why).toBe(0);
  expect(r.files['run-exit']?.trim(), why).toBe('0');
  const res = results(r);
  expect(res.environment.cgroupVersion, why).toBe('v2');
  expect(res.environment.oomFidelity, why).toBe('cgroup-oom');
  expect(res.environment.cgroupDelegation?.kind, why).toBe(delegation);
  expect(res.environment.podFidelity, 'pods in cgroups of their own').toBe('cgroup-pods');
  for (const v of res.variants) {
    expect(v.error, `${v.name}: ${why}`).toBeUndefined();
    expect(v.memoryLimitBytes, v.name).toBe(LIMIT);
    expect(v.peakMemoryBytes, v.name).toBeGreaterThan(16 * MiB);
    expect(v.verdict, `${v.name}: ${JSON.stringify(v.expectations)}`).not.toBe('failed');
    // Memory pressure short of a kill, as v2 reports it: memory.events max and PSI over the storm.
    if (!v.notJudged) {
      expect(v.memoryPressure?.length, `${v.name}: memoryPressure`).toBeGreaterThan(0);
      for (const p of v.memoryPressure!) {
        expect(p.limitHits, `${v.name} r${p.rep}: memory.events max`).toEqual(expect.any(Number));
        expect(p.stallSome, `${v.name} r${p.rep}: memory.pressure some`).toEqual(expect.any(Number));
        expect(p.stallFull, `${v.name} r${p.rep}: memory.pressure full`).toEqual(expect.any(Number));
      }
    }
  }
  // The limit the agents ran under, read from their cgroups while they ran: memory.max and no swap.
  const limits = lines(r, 'limits');
  expect(limits.length, why).toBeGreaterThan(0);
  for (const l of limits) expect(l, 'memory.max and memory.swap.max of an agent cgroup').toMatch(LIMIT_LINE);
  // An emulated guest may be too slow to start the storm in time: then the variant says so (not
  // judged, inconclusive) and there is nothing to assert about its deaths.
  const disabled = variant(res, 'disabled');
  if (!disabled.notJudged) {
    expect(disabled.oomKills, why).toBeGreaterThan(0);
    expect(disabled.deaths.some((d) => d.cause === 'oom-kill')).toBe(true);
  }
  const pre = variant(res, 'pre-attestation');
  if (!pre.notJudged) expect(pre.oomKills).toBe(0);
  expect(lines(r, 'left'), 'cgroups named after attestorm left when the run ended').toEqual([]);
  return res;
}

const run = (extra = '') => runJob(`node bin/attestorm.js run ${SMALL} --out "$out" --no-report ${extra}`);

/** Pod cgroups named as the kubelet names them with each cgroup driver (a pod-level and a container-level cgroup). */
const POD_CGROUP = {
  cgroupfs: /\/kubepods\/(besteffort\/|burstable\/)?pod[0-9a-f-]{36}$/,
  systemd: /\/kubepods\.slice\/(kubepods-(besteffort|burstable)\.slice\/)?kubepods-((besteffort|burstable)-)?pod[0-9a-f_]{36}\.slice$/,
};

function expectPodCgroups(r: GuestResult, driver: keyof typeof POD_CGROUP): void {
  const pods = lines(r, 'pods');
  expect(
    pods.some((p) => POD_CGROUP[driver].test(p)),
    `a pod cgroup named as the kubelet's ${driver} driver names it, in:\n${pods.join('\n')}`,
  ).toBe(true);
}

describe.skipIf(unavailable.minimal !== null)('cgroup v2 without systemd (minimal guest)', () => {
  it('a runner sharing its service cgroup makes a fresh cgroup at the root and runs under a CPU budget', async () => {
    const r = await guest('minimal', 'runner-service', run('--cpu-budget 1.5'));
    expectRealV2Run(r, 'fresh-cgroup');
    expectPodCgroups(r, 'cgroupfs');
  });

  it('a runner SIGKILLed mid-run leaves what attestorm cleanup removes, and nothing after it', async () => {
    const r = await guest('minimal', 'runner-service', killedRunJob(`node bin/attestorm.js run ${SMALL} --out "$out" --no-report`));
    const why = explain(r);
    expect(lines(r, 'before-cleanup').length, `the pods' cgroups existed before the kill: ${why}`).toBeGreaterThan(0);
    expect(r.files['cleanup-exit']?.trim(), r.files['cleanup.out']).toBe('0');
    expect(lines(r, 'left'), r.files['cleanup.out']).toEqual([]);
    expect(lines(r, 'left-processes')).toEqual([]);
    expect(JSON.parse(r.files['results.json'] ?? '{}').status, 'a killed run says so').not.toBe('complete');
  });

  it('freezes, throttles, squeezes and kills the agent through its v2 cgroup, pinned by cpuset', async () => {
    const r = await guest(
      'minimal',
      'runner-service',
      runJob(`node bin/attestorm.js run test/vm/fixtures/v2-faults.yaml --out "$out" --no-report --agent-cpus 1`),
    );
    const why = explain(r);
    expect(r.files['run-exit']?.trim(), why).toBe('0');
    const res = results(r);
    expect(res.environment.cgroupVersion).toBe('v2');
    expect(res.environment.isolation, why).toMatchObject({ applied: true });
    // The runner moved into the run's own cgroups (the harness cpuset) still starts pods in theirs.
    expect(res.environment.podFidelity, why).toBe('cgroup-pods');
    expectPodCgroups(r, 'cgroupfs');
    const faults = variant(res, 'pre-attestation').faults ?? [];
    expect(faults.map((f) => f.action)).toEqual(['agent-pause', 'cpu-throttle', 'memory-squeeze', 'agent-kill']);
    for (const f of faults) {
      expect(f.error, `${f.action}: ${f.detail}`).toBeUndefined();
      expect(f.startedAtMs, f.action).not.toBeNull();
    }
    expect(faults[0]!.detail).toContain('cgroup.freeze');
    expect(lines(r, 'left')).toEqual([]);
  });
});

describe.skipIf(unavailable.systemd !== null)('cgroup v2 with systemd as PID 1 (systemd guest)', () => {
  it('sudo from a login session: a delegated scope of its own, not the session beside the shell', async () => {
    const r = await guest('systemd', 'session', run());
    expect(r.files.who, 'the job ran in the login session').toMatch(/user-1000\.slice\/session-\d+\.scope/);
    expectRealV2Run(r, 'systemd-scope');
  });

  it('a system service without Delegate=: a delegated scope of its own', async () => {
    const r = await guest('systemd', 'service', run('--set load.cgroupDriver=systemd'));
    expect(r.files.who).toContain('system.slice/attestorm-job.service');
    expectRealV2Run(r, 'systemd-scope');
    expectPodCgroups(r, 'systemd');
  });

  it('a logged-in user without root: a scope the user manager delegates, with real limits and OOM kills', async () => {
    const r = await guest('systemd', 'user', run('--set load.cgroupDriver=systemd'));
    expect(r.files.who).toMatch(/^uid=1000\(tester\)/);
    const res = expectRealV2Run(r, 'systemd-scope');
    expect(res.environment.cgroupDelegation?.base).toContain('user@1000.service');
    expectPodCgroups(r, 'systemd');
  });

  it('in a Docker container with a cgroup namespace of its own: privileged it runs for real, unprivileged it refuses first', async () => {
    const r = await guest('systemd', 'service', containerJob());
    const why = `${explain(r)}\ndocker: ${r.files['docker-start'] ?? ''}${r.files.import ?? ''}`;
    expect(r.exitCode, why).toBe(0);
    expect(r.files['run-exit']?.trim(), why).toBe('0');
    const res = results(r);
    expect(res.environment.cgroupVersion, why).toBe('v2');
    expect(res.environment.oomFidelity).toBe('cgroup-oom');
    // The container's init is the runner itself (alone: a leaf of its own) or a shell beside it.
    expect(['leaf-move', 'container-init'], why).toContain(res.environment.cgroupDelegation?.kind);
    for (const v of res.variants) expect(v.peakMemoryBytes, v.name).toBeGreaterThan(16 * MiB);
    for (const l of lines(r, 'limits')) expect(l).toMatch(LIMIT_LINE);
    expect(lines(r, 'limits').length, why).toBeGreaterThan(0);
    // Without --privileged Docker mounts the cgroup tree read-only: refused before anything starts.
    expect(r.files['refused-exit']?.trim(), r.files['refused.err']).toBe('3');
    expect(r.files['refused.err']).toMatch(/cgroup/);
    expect(r.files['refused.err']).toMatch(/--privileged|--cgroupns/);
    expect(r.files['refused-wrote'], 'the refused run wrote no run folder').toBeUndefined();
    expect(lines(r, 'containers-left')).toEqual([]);
  });
});
