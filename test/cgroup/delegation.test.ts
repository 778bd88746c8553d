// The delegation plan's choices on fixture views (which files a real root has, who else is in the
// cgroup, whether systemd runs). Carrying a plan out needs a real cgroup v2 kernel: test/vm does that.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planDelegation, type DelegationView } from '../../src/cgroup/index.js';

const tmp = mkdtempSync(join(tmpdir(), 'attestorm-delegation-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A unified mount: the real root (no cgroup.type) or a container's namespace root (with one). */
function mount(kind: 'real-root' | 'namespace-root', own = '/'): string {
  const dir = mkdtempSync(join(tmp, 'm-'));
  writeFileSync(join(dir, 'cgroup.controllers'), 'cpuset cpu io memory pids');
  if (kind === 'namespace-root') writeFileSync(join(dir, 'cgroup.type'), 'domain');
  if (own !== '/') {
    mkdirSync(join(dir, own), { recursive: true });
    writeFileSync(join(dir, own, 'cgroup.type'), 'domain');
  }
  return dir;
}

function view(over: Partial<DelegationView>): DelegationView {
  return { mount: mount('real-root'), own: '/system.slice/runner.service', pid: 100, uid: 0, procs: [100], systemd: false, delegatedScope: null, ...over };
}

const argv = ['/usr/bin/node', '/src/bin/attestorm.js', 'run', 'scenarios/quick.yaml'];

describe('planDelegation', () => {
  it('the real root cgroup needs nothing: it may hold processes and delegate', () => {
    const m = mount('real-root');
    expect(planDelegation(view({ mount: m, own: '/', procs: [1, 100] }), argv)).toMatchObject({ action: 'use', kind: 'root-cgroup', base: m });
  });

  it('alone in its cgroup without systemd: a leaf move in that cgroup', () => {
    const m = mount('real-root', '/runner');
    expect(planDelegation(view({ mount: m, own: '/runner', procs: [100] }), argv)).toMatchObject({
      action: 'use',
      kind: 'leaf-move',
      base: join(m, 'runner'),
    });
  });

  it('under systemd, shared or not: re-run in a transient scope with Delegate=yes (the user manager for non-root)', () => {
    const root = planDelegation(view({ systemd: true, procs: [90, 100] }), argv);
    expect(root).toMatchObject({ action: 'reexec', kind: 'systemd-scope' });
    if (root.action !== 'reexec') throw new Error('unreachable');
    expect(root.command).toEqual(['systemd-run', '--scope', '--quiet', '--collect', '-p', 'Delegate=yes', '--unit=attestorm-100.scope', '--', ...argv]);
    const user = planDelegation(view({ systemd: true, uid: 1000, procs: [100] }), argv);
    if (user.action !== 'reexec') throw new Error(`expected a re-run, got ${user.action}`);
    expect(user.command.slice(0, 3)).toEqual(['systemd-run', '--user', '--scope']);
  });

  it('the re-run inside its scope moves into a leaf there, recorded as systemd-scope', () => {
    const m = mount('real-root', '/system.slice/attestorm-90.scope');
    const plan = planDelegation(view({ mount: m, own: '/system.slice/attestorm-90.scope', systemd: true, delegatedScope: 'attestorm-90.scope' }), argv);
    expect(plan).toMatchObject({ action: 'use', kind: 'systemd-scope', base: join(m, 'system.slice/attestorm-90.scope') });
  });

  it('root, shared, no systemd: a fresh cgroup at the real root; in a container namespace root, the init leaf', () => {
    const m = mount('real-root', '/session');
    expect(planDelegation(view({ mount: m, own: '/session', procs: [7, 100] }), argv)).toMatchObject({ action: 'use', kind: 'fresh-cgroup', base: m });
    const c = mount('namespace-root');
    expect(planDelegation(view({ mount: c, own: '/', procs: [1, 7, 100] }), argv)).toMatchObject({ action: 'use', kind: 'container-init', base: c });
  });

  it('not root, shared, no systemd: refused, naming the cgroup, the rule and what would work', () => {
    const m = mount('real-root', '/session');
    const plan = planDelegation(view({ mount: m, own: '/session', uid: 1000, procs: [7, 100] }), argv);
    expect(plan.action).toBe('refuse');
    if (plan.action !== 'refuse') throw new Error('unreachable');
    expect(plan.reason).toMatch(/cgroup v2 cgroup \/session also holds 7/);
    expect(plan.reason).toMatch(/no-internal-processes rule/);
    expect(plan.reason).toMatch(/sudo npm start/);
    expect(plan.reason).toMatch(/systemd-run --user --scope -p Delegate=yes/);
  });
});
