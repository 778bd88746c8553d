// `attestorm run` refuses bad input before starting anything: exit 2 and every problem by path.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/util/index.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-runcli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(process.execPath, [join(PROJECT_ROOT, 'bin/attestorm.js'), 'run', ...args], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
    env,
  });
  return { code: r.status, stderr: r.stderr, stdout: r.stdout };
}

describe('attestorm run: invalid input', () => {
  it('lists every scenario problem by path and exits 2 without creating a run folder', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'name: bad\nload:\n  workersPerPod: 0\n  deadline: soon\nagent:\n  memoryLimit: lots\n');
    const out = join(dir, 'out');
    const r = run([file, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: load.workersPerPod must be a positive integer, got 0`);
    expect(r.stderr).toContain(`${file}: load.deadline must be a duration like 500ms, 30s or 2m, got "soon"`);
    expect(r.stderr).toContain(`${file}: agent.memoryLimit must be a size like 128Mi, 1Gi or a byte count, got "lots"`);
    expect(existsSync(out)).toBe(false);
  });

  it('--cluster: an external variant is refused before anything (exit 2); no kubeconfig is a preflight failure naming the step (exit 3)', () => {
    const ext = join(dir, 'ext.yaml');
    writeFileSync(ext, 'name: ext\ntarget: { socket: /run/agent.sock, pid: 1 }\n');
    const bad = run([ext, '--cluster', 'kind']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('an external agent (socket /run/agent.sock on this machine) cannot run in kind mode');
    // quick.yaml has bystanders, which kind mode runs as pods of their own: past the checks, to the preflight.
    const q = run(['scenarios/quick.yaml', '--cluster', 'kind', '--no-report'], { ...process.env, KUBECONFIG: join(dir, 'no-such-kubeconfig') });
    expect(q.stderr).not.toContain('bystanders');
    expect(q.code).toBe(3);
    // chaos.yaml's faults Kubernetes cannot express are refused by name and rule; the mapped ones are not.
    const c = run(['scenarios/chaos.yaml', '--cluster', 'kind', '--no-report']);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain(
      "scenarios/chaos.yaml: faults[1] (kubelet-latency) cannot run in kind mode: the kubelet is the cluster's real one, not the harness's emulator; remove it or run locally",
    );
    expect(c.stderr).toContain('scenarios/chaos.yaml: faults[4] (agent-pause) cannot run in kind mode');
    expect(c.stderr).not.toMatch(/faults\[(0|2|7)\]/); // pod-churn, agent-kill, memory-squeeze
    const r = run(['scenarios/spire-vs-reference.yaml', '--cluster', 'kind', '--no-report'], { ...process.env, KUBECONFIG: join(dir, 'no-such-kubeconfig') });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('preflight (context): cannot read the kubeconfig');
  });

  it('checks flags with the scenario rules', () => {
    const r = run(['scenarios/quick.yaml', '--duration', 'forever', '--placements', 'pre-attestation,sideways']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--duration must be a duration like 500ms, 30s or 2m, got "forever"');
    expect(r.stderr).toContain('--variants: "sideways" is not a variant of quick (it has pre-attestation, post-attestation, disabled, disabled-unbounded)');
  });

  it('--agent-cpus: a malformed list, and CPUs this machine lacks, exit 2 before anything starts', () => {
    expect(run(['scenarios/quick.yaml', '--agent-cpus', 'one'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--agent-cpus must be a CPU list like "1", "0-1" or "0,2-3", got "one"'),
    });
    const out = join(dir, 'iso-out');
    const r = run(['scenarios/quick.yaml', '--agent-cpus', '4095', '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/isolation\.agentCpus asks for CPU 4095, but this machine offers CPUs \d/);
    expect(existsSync(out)).toBe(false);
  });

  it('rejects a missing file and YAML that is not a mapping', () => {
    expect(run([join(dir, 'nope.yaml')])).toMatchObject({ code: 2 });
    const list = join(dir, 'list.yaml');
    writeFileSync(list, '- 1\n- 2\n');
    const r = run([list]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('must be a YAML mapping of scenario keys, got a list');
  });

  it('documents the exit statuses in its help', () => {
    const r = spawnSync(process.execPath, [join(PROJECT_ROOT, 'bin/attestorm.js'), 'run', '--help'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
    for (const code of ['0 ', '1 ', '2 ', '3 ', '130']) expect(r.stdout).toContain(`  ${code}`);
    expect(r.stdout).toContain('--placements');
  });
});
