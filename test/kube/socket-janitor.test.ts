// The socket janitor's script, run for real with node on a temp directory standing for the node's
// /run/attestorm: it removes the named namespaces' directories, or every run's but the kept ones.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JANITOR_SCRIPT, janitorPod } from '../../src/platform/cluster/index.js';

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

function node(env: Record<string, string>) {
  const r = spawnSync(process.execPath, ['-e', JANITOR_SCRIPT], { env: { ...process.env, ATTESTORM_SOCKET_PARENT: root, ...env }, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

function layout(): void {
  root = mkdtempSync(join(tmpdir(), 'janitor-'));
  for (const d of ['atst-a-pre-r1', 'atst-b-disabled-r1', 'atst-c-pre-r1', 'sockets-of-someone']) {
    mkdirSync(join(root, d));
    writeFileSync(join(root, d, 'agent.sock'), '');
  }
}

describe('socket janitor', () => {
  it('removes the named directories only (and ignores names that are not namespace names)', () => {
    layout();
    const out = node({ ATTESTORM_REMOVE: JSON.stringify(['atst-a-pre-r1', '../etc', 'atst-missing']) });
    expect(out).toBe(`removed ${join(root, 'atst-a-pre-r1')}\n`);
    expect(readdirSync(root).sort()).toEqual(['atst-b-disabled-r1', 'atst-c-pre-r1', 'sockets-of-someone']);
  });
  it('with a keep list removes every run directory but those, never foreign ones', () => {
    layout();
    node({ ATTESTORM_KEEP: JSON.stringify(['atst-c-pre-r1']) });
    expect(readdirSync(root).sort()).toEqual(['atst-c-pre-r1', 'sockets-of-someone']);
    rmSync(root, { recursive: true });
    expect(node({ ATTESTORM_KEEP: '[]' })).toBe(''); // no parent directory on this node: nothing to do
    expect(existsSync(root)).toBe(false);
  });
  it('is a root pod pinned to its node with the parent directory as hostPath', () => {
    const p = janitorPod({ namespace: 'ns', node: 'node-1', image: 'attestorm:dev', remove: ['ns'], runId: 'r' }) as unknown as {
      spec: {
        nodeName: string;
        restartPolicy: string;
        containers: Array<{ securityContext: { runAsUser: number }; env: Array<{ name: string; value: string }> }>;
        volumes: Array<{ hostPath: { path: string } }>;
      };
    };
    expect(p.spec.nodeName).toBe('node-1');
    expect(p.spec.restartPolicy).toBe('Never');
    expect(p.spec.containers[0]!.securityContext.runAsUser).toBe(0);
    expect(p.spec.volumes[0]!.hostPath.path).toBe('/run/attestorm');
    expect(p.spec.containers[0]!.env).toContainEqual({ name: 'ATTESTORM_REMOVE', value: '["ns"]' });
  });
});
