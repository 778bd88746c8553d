// `attestorm kind …` as a user runs it: real CLI processes. `kind up`/`down` are tested with a PATH
// of the test's own, whatever the machine has installed: without an engine (the error path), and
// with a STAND-IN `kind` that records its arguments and fails (real clusters: `npm run test:kind`); `cleanup`
// runs against the FAKE API server (test/kube/fake-apiserver.ts).
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { FakeApiServer } from './fake-apiserver.js';

const ROOT = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'attestorm-cli-kind-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/attestorm.js'), ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('attestorm kind', () => {
  it('up and down without a Docker engine: a clear error naming what to start, exit 3', async () => {
    // An empty folder as the whole PATH (no docker, no kind), and kind mode's own engine socket where none runs.
    const empty = join(dir, 'empty-bin');
    mkdirSync(empty);
    const env = { PATH: empty, ATTESTORM_DOCKER_RUN: join(dir, 'no-engine'), ATTESTORM_KIND_CACHE: join(dir, 'kind-cache') };
    const up = await cli(['kind', 'up', '--name', 'demo'], env);
    expect(up.code).toBe(3);
    expect(up.stderr).toMatch(/attestorm: no Docker engine answers \(.*\): start kind mode's own with `attestorm kind engine up`/);
    const down = await cli(['kind', 'down'], env);
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('no Docker engine answers');
  });

  it('up and down with a `kind` that fails: its exit status named, exit 3 (STAND-IN kind and docker on a PATH of their own)', async () => {
    const bin = join(dir, 'stand-in-bin');
    mkdirSync(bin);
    const log = join(dir, 'kind-args.log');
    writeFileSync(join(bin, 'kind'), `#!/bin/sh\necho "$@" >> ${log}\nexit 7\n`);
    // An engine that answers `docker version`, and nothing else.
    writeFileSync(join(bin, 'docker'), `#!/bin/sh\n[ "$1" = version ] && echo 20.10.24 && exit 0\nexit 1\n`);
    chmodSync(join(bin, 'kind'), 0o755);
    chmodSync(join(bin, 'docker'), 0o755);
    const env = { PATH: `${bin}:/usr/bin:/bin` };
    const up = await cli(['kind', 'up', '--name', 'demo', '--node-image', 'example/node:v1', '--no-project-image'], env);
    expect(up.code, up.stderr).toBe(3);
    expect(up.stderr).toContain('node image example/node:v1: given with --node-image');
    expect(up.stderr).toContain('kind create cluster --name demo failed (exit 7)');
    const down = await cli(['kind', 'down', '--name', 'demo'], env);
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('kind delete cluster --name demo failed (exit 7)');
    const calls = readFileSync(log, 'utf8').trim().split('\n');
    // `kind version` first (which kind is on PATH), then create and delete.
    expect(calls.filter((c) => c !== 'version')).toEqual([
      expect.stringMatching(/^create cluster --name demo --config \S+kind\.yaml --wait 300s$/),
      'delete cluster --name demo',
    ]);
  });

  it('--nodes outside 1-9 is invalid input (exit 2), before any tool runs', async () => {
    const r = await cli(['kind', 'up', '--nodes', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--nodes must be an integer from 1 to 9, got 0');
  });

  it('a bad cluster name is invalid input (exit 2), before any tool runs', async () => {
    const r = await cli(['kind', 'up', '--name', 'Demo_1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--name must be a kind cluster name (lowercase letters, digits, "-"), got "Demo_1"');
  });

  it('render --out writes one YAML file per variant with the namespace, RBAC, agent and generators', async () => {
    const out = join(dir, 'render');
    const r = await cli(['kind', 'render', 'scenarios/quick.yaml', '--out', out, '--spire', '--spire-tag', '1.13.3']);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['disabled-unbounded.yaml', 'disabled.yaml', 'post-attestation.yaml', 'pre-attestation.yaml', 'spire.yaml']);
    const docs = parseAllDocuments(readFileSync(join(out, 'pre-attestation.yaml'), 'utf8')).map((d) => d.toJS());
    expect(docs.map((d) => d.kind)).toEqual([
      'Namespace',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'DaemonSet',
      'ServiceAccount',
      'Pod',
      'Pod',
    ]);
    // quick.yaml's storm is one pod, and it has bystanders: a pod of their own after the storm's.
    expect(docs.filter((d) => d.kind === 'Pod').map((d) => d.metadata.name)).toEqual(['generator-0', 'bystander-0']);
    const spire = parseAllDocuments(readFileSync(join(out, 'spire.yaml'), 'utf8')).map((d) => d.toJS());
    expect(spire.find((d) => d.kind === 'Deployment').spec.template.spec.containers[0].image).toBe('ghcr.io/spiffe/spire-server:1.13.3');
    expect(spire.find((d) => d.kind === 'ConfigMap' && d.metadata.name === 'spire-agent-config').data['agent.conf']).toContain('fetch_jwt_svid = 10');
  });

  it('render --memory-sampler adds the sampler pod a --context run applies', async () => {
    const r = await cli(['kind', 'render', 'scenarios/ci-kind.yaml', '--memory-sampler']);
    expect(r.code, r.stderr).toBe(0);
    const docs = parseAllDocuments(r.stdout)
      .map((d) => d.toJS())
      .filter(Boolean);
    expect(docs.filter((d) => d.metadata?.name === 'memory-sampler')).toHaveLength(2); // one per variant
  });

  it('render of a scenario with an external target is refused by name', async () => {
    const r = await cli(['kind', 'render', join(ROOT, 'test/kube/fixtures/external-target.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/variants\.\S+: an external agent \(socket \/run\/spire\/sockets\/agent.sock on this machine\) cannot run in kind mode/);
  });

  it('cleanup --dry-run lists, cleanup removes leftovers by label (fake API server)', async () => {
    const fake = await new FakeApiServer().start();
    try {
      const kubeconfig = fake.writeKubeconfig(join(dir, 'kc.yaml'), 'kind-attestorm');
      const managed = { 'app.kubernetes.io/managed-by': 'attestorm' };
      fake.objects.set('/api/v1/namespaces/atst-old-run-disabled-r1', { kind: 'Namespace', metadata: { name: 'atst-old-run-disabled-r1', labels: managed } });
      fake.objects.set('/api/v1/namespaces/someone-else', { kind: 'Namespace', metadata: { name: 'someone-else', labels: {} } });
      fake.objects.set('/apis/rbac.authorization.k8s.io/v1/clusterroles/atst-old-run-disabled-r1-agent', {
        kind: 'ClusterRole',
        metadata: { name: 'atst-old-run-disabled-r1-agent', labels: managed },
      });
      const dry = await cli(['kind', 'cleanup', '--dry-run', '--kubeconfig', kubeconfig]);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toBe(
        'would delete namespace/atst-old-run-disabled-r1\nwould delete clusterrole/atst-old-run-disabled-r1-agent\nwould delete socket directories /run/attestorm/atst-* on the nodes\n',
      );
      expect(fake.janitors).toEqual([]);
      expect(fake.deleted).toEqual([]);
      const real = await cli(['kind', 'cleanup', '--kubeconfig', kubeconfig]);
      expect(real.code, real.stderr).toBe(0);
      // Once the namespaces are gone, the runs' socket directories on the node, from a janitor namespace of
      // its own (then deleted): every run's directory but those of run namespaces that stay (none here).
      expect(fake.janitors).toEqual([
        expect.objectContaining({ node: 'fake-control-plane', hostPath: '/run/attestorm', env: expect.objectContaining({ ATTESTORM_KEEP: '[]' }) }),
      ]);
      const janitorNs = fake.janitors[0]!.namespace;
      expect(janitorNs).toMatch(/^attestorm-janitor-/);
      const nsDelete = fake.changes.find((c) => c.method === 'DELETE' && c.path === '/api/v1/namespaces/atst-old-run-disabled-r1')!;
      expect(fake.janitors[0]!.at).toBeGreaterThanOrEqual(nsDelete.at);
      expect(fake.deleted.sort()).toEqual(
        [
          `/api/v1/namespaces/${janitorNs}/pods/socket-janitor-fake-control-plane`,
          '/api/v1/namespaces/atst-old-run-disabled-r1',
          `/api/v1/namespaces/${janitorNs}`,
          '/apis/rbac.authorization.k8s.io/v1/clusterroles/atst-old-run-disabled-r1-agent',
        ].sort(),
      );
      expect(fake.objects.has('/api/v1/namespaces/someone-else')).toBe(true);
      const none = await cli(['kind', 'cleanup', '--cluster', 'kind:missing', '--kubeconfig', kubeconfig]);
      expect(none.code).toBe(3);
      expect(none.stderr).toContain('preflight (context): context "kind-missing" is not in the kubeconfig');
    } finally {
      await fake.close();
    }
  });
});
