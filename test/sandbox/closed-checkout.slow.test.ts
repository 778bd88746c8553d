// A checkout below a folder closed to other users (mode 0700, as a home directory or `mktemp -d`):
// pods that run as a uid of their own cannot reach the bundles built inside it. A real `attestorm
// run` from such a copy of the project, with per-pod uids and bystanders of their own, must serve
// both; a temp folder closed to those uids is refused before anything starts.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { PROJECT_ROOT } from '../../src/util/index.js';
import { skipNote } from '../support/skip-note.js';

const isRoot = process.getuid?.() === 0;
const { host, reason } = detectCgroupHost();
const skipReason = !isRoot ? 'pods of another uid need root' : !host ? reason : null;
if (skipReason) skipNote('closed-checkout.slow.test.ts (a run from a checkout below a 0700 folder)', skipReason);

const closed = mkdtempSync(join(tmpdir(), 'attestorm-closed-'));
afterAll(() => rmSync(closed, { recursive: true, force: true }));

/** A copy of the project below the 0700 folder: sources copied, node_modules hard-linked (no bundle cache). */
function copyProject(): string {
  const copy = join(closed, 'checkout');
  mkdirSync(copy);
  for (const part of ['bin', 'src', 'proto', 'scenarios', 'package.json', 'tsconfig.json'])
    cpSync(join(PROJECT_ROOT, part), join(copy, part), { recursive: true });
  const linked = spawnSync('cp', ['-al', join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules')]);
  if (linked.status !== 0) cpSync(join(PROJECT_ROOT, 'node_modules'), join(copy, 'node_modules'), { recursive: true });
  rmSync(join(copy, 'node_modules', '.cache'), { recursive: true, force: true });
  return copy;
}

const SCENARIO = `name: closed-checkout
duration: 4s
warmup: 500ms
agent:
  memoryLimit: 256Mi
  attestors: [k8s]
  kubelet: { visibilityDelay: 0s }
  rateLimits: { fetch_jwt_svid: 5 }
load:
  pods: 2
  workersPerPod: 2
  connection: per-call
  deadline: 1s
  retry: immediate
  uidMode: per-pod
  bystanders: { pods: 1, rate: 1, uid: own }
variants:
  - { name: os-uid, agent: { placement: pre-attestation, key: os-uid } }
`;

describe.skipIf(skipReason !== null)('a run from a checkout below a 0700 folder', () => {
  const copy = isRoot && host ? copyProject() : '';
  const scenario = join(closed, 'scenario.yaml');
  writeFileSync(scenario, SCENARIO);

  function run(out: string, env: NodeJS.ProcessEnv = {}) {
    return spawnSync(process.execPath, [join(copy, 'bin/attestorm.js'), 'run', scenario, '--out', out, '--no-report'], {
      cwd: copy,
      encoding: 'utf8',
      timeout: 180_000,
      env: { ...process.env, ...env },
    });
  }

  it('pods with per-pod uids and bystanders with a uid of their own start, call and are served', () => {
    expect((spawnSync('stat', ['-c', '%a', closed], { encoding: 'utf8' }).stdout ?? '').trim()).toBe('700');
    const out = join(closed, 'run');
    const r = run(out);
    expect(r.stderr).not.toContain('Cannot find module');
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    const v = results.variants[0];
    expect(results.status).toBe('complete');
    expect(v.storm.startedWorkers).toBe(4);
    expect(v.okRps).toBeGreaterThan(0);
    expect(v.rejectedRps).toBeGreaterThan(0);
    expect(v.bystanders.ok).toBeGreaterThan(0);
  });

  it('a temp folder those uids cannot enter is refused before anything starts, naming the setting, uid, folder and mode', () => {
    const tmp = join(closed, 'private-tmp');
    mkdirSync(tmp);
    chmodSync(tmp, 0o700);
    const out = join(closed, 'refused');
    const r = run(out, { ATTESTORM_TMPDIR: join(tmp, 'attestorm') });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain(`load.uidMode "per-pod": pod processes run as uid 20000, which cannot reach the run's temp folder`);
    expect(r.stderr).toContain(`${closed} is mode 0700`);
    expect(spawnSync('ls', [out]).status, 'no run folder').not.toBe(0);
  });
});
