// The sandbox against the reference agent's k8s attestor: pods in kubelet-named cgroups call the
// agent, which resolves them through its own cgroup parser and the emulator's /pods (HTTPS, bearer
// token, visibility delay), and gets exactly the selectors the pod's identity implies.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAgentConfig, startAgent, type RunningAgent } from '../../src/agent/index.js';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { PROTO_PATH } from '../../src/proto/index.js';
import { createSandbox, newRunId, type Sandbox, type SandboxPod } from '../../src/sandbox/index.js';
import { skipNote } from '../support/skip-note.js';

const { host, reason } = detectCgroupHost();
if (!host) skipNote('every test of agent-k8s.slow.test.ts', reason);
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

interface CallResult {
  pid: number;
  at: number;
  code: number;
  details: string;
  spiffeIds: string[];
}

describe.skipIf(!host)(`sandbox pods attested by the reference agent's k8s attestor (${reason})`, () => {
  it('each pod gets the identity whose k8s selectors name it, after the pod becomes visible', async () => {
    const VISIBILITY_MS = 5000; // well past the agent's start, so calls arrive before the pods are listed
    const sb: Sandbox = await createSandbox({
      runId: newRunId('sbagent'),
      pods: 2,
      cgroupDriver: 'systemd',
      kubelet: { tls: true, token: 'node-token', visibilityDelayMs: VISIBILITY_MS },
    });
    cleanups.push(() => sb.close());
    const dir = mkdtempSync(join(tmpdir(), 'attestorm-sbagent-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const socket = join(dir, 'agent.sock');

    const mains = new Map<string, ChildProcess>();
    const ready: Promise<void>[] = [];
    const results = new Map<string, Promise<CallResult>>();
    await sb.startPods((pod) => {
      const child = sb.spawnInPod(pod, process.execPath, [join(import.meta.dirname, 'fixtures', 'fetch-jwt-on-go.mjs'), socket, PROTO_PATH], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      mains.set(pod.uid, child);
      ready.push(new Promise((r) => child.once('message', () => r())));
      results.set(pod.uid, new Promise((r) => child.on('message', (m) => m !== 'ready' && r(m as CallResult))));
      return child;
    });
    await Promise.all(ready);
    const pods = sb.pods();

    // One entry per pod that needs every k8s selector the pod should produce: any wrong field in
    // the document or the cgroup path turns into PermissionDenied.
    const rs = (p: SandboxPod) => p.name.slice(0, p.name.lastIndexOf('-'));
    const entries = pods.map((p) => ({
      spiffeId: `spiffe://example.org/storm/${p.index}`,
      selectors: [
        `k8s:pod-uid:${p.uid}`,
        `k8s:pod-name:${p.name}`,
        'k8s:ns:storm',
        'k8s:sa:storm-worker',
        'k8s:node-name:attestorm-node',
        'k8s:pod-label:app:storm',
        `k8s:pod-owner:ReplicaSet:${rs(p)}`,
        'k8s:container-name:storm',
        'k8s:container-image:registry.local/storm-worker:1.0',
        `k8s:pod-image:${p.imageId}`,
        'k8s:pod-image-count:1',
        `unix:uid:${process.getuid!()}`,
      ],
    }));
    const entriesFile = join(dir, 'entries.yaml');
    writeFileSync(entriesFile, JSON.stringify({ entries })); // JSON is YAML
    const agent: RunningAgent = await startAgent(
      parseAgentConfig({
        socket,
        attestors: ['unix', 'k8s'],
        entries: entriesFile,
        k8s: { kubeletUrl: sb.kubeletUrl, tokenFile: sb.tokenFile!, caFile: sb.caFile!, pollInterval: '200ms' },
      }),
      { log: () => {}, graceMs: 1000 },
    );
    cleanups.unshift(() => agent.close());

    const goAt = Date.now();
    for (const child of mains.values()) child.send('go');
    for (const p of pods) {
      const r = await results.get(p.uid)!;
      expect(r).toMatchObject({ code: 0, spiffeIds: [`spiffe://example.org/storm/${p.index}`] });
      // Attestation had to wait for the kubelet to list the pod.
      expect(r.at).toBeGreaterThanOrEqual(p.startedAt + VISIBILITY_MS);
    }
    const stats = sb.kubelet.stats();
    expect(stats.unauthorized).toBe(0);
    // Calls that arrived while the pods were unlisted made the attestor poll the kubelet again.
    if (goAt < Math.min(...pods.map((p) => p.startedAt)) + VISIBILITY_MS - 500) expect(stats.podsServed).toBeGreaterThanOrEqual(2);
  });
});
