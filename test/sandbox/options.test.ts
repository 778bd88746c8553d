// Bad sandbox and kubelet options fail with a ConfigError naming the input path and the rule,
// before any cgroup, temp file or server exists.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { ConfigError } from '../../src/errors.js';
import { createSandbox, newRunId, ownerPidOf, parseSandboxOptions, runTempDir, startKubeletEmulator } from '../../src/sandbox/index.js';
import { skipNote } from '../support/skip-note.js';

async function configError(p: Promise<unknown>): Promise<ConfigError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return err as ConfigError;
}

describe('sandbox options', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['runId with capitals', { runId: 'Run_1', pods: 1 }, /sandbox\.runId:? .*\/\^\[a-z0-9-\]\+\$\//],
    ['pods 0', { runId: 'r-1', pods: 0 }, /sandbox\.pods.*>=\s*1|sandbox\.pods.*too small/i],
    ['pods 1.5', { runId: 'r-1', pods: 1.5 }, /sandbox\.pods.*int/i],
    ['unknown driver', { runId: 'r-1', pods: 1, cgroupDriver: 'docker' }, /sandbox\.cgroupDriver.*cgroupfs.*systemd/],
    ['unknown qos', { runId: 'r-1', pods: 1, qosClass: 'gold' }, /sandbox\.qosClass/],
    ['bad namespace', { runId: 'r-1', pods: 1, namespace: 'Bad NS' }, /sandbox\.namespace.*DNS-1123 label/],
    ['bad label key', { runId: 'r-1', pods: 1, labels: { 'bad key!': 'x' } }, /sandbox\.labels.*label key/],
    ['bad uidMode', { runId: 'r-1', pods: 1, uidMode: 'random' }, /sandbox\.uidMode/],
    ['lifetime too short', { runId: 'r-1', pods: 1, podLifetimeMs: 5 }, /sandbox\.podLifetimeMs.*100/],
    ['bad useCgroups', { runId: 'r-1', pods: 1, useCgroups: 'sometimes' }, /sandbox\.useCgroups/],
    [
      'non-loopback listen',
      { runId: 'r-1', pods: 1, kubelet: { listen: '0.0.0.0:10250' } },
      /sandbox\.kubelet\.listen must be a loopback address.*0\.0\.0\.0:10250/,
    ],
    ['listen without port', { runId: 'r-1', pods: 1, kubelet: { listen: '127.0.0.1' } }, /sandbox\.kubelet\.listen must be host:port/],
    ['failure rate above 1', { runId: 'r-1', pods: 1, kubelet: { failureRate: 1.5 } }, /sandbox\.kubelet\.failureRate.*1/],
    ['negative latency', { runId: 'r-1', pods: 1, kubelet: { latencyMs: -1 } }, /sandbox\.kubelet\.latencyMs.*0/],
    ['empty token', { runId: 'r-1', pods: 1, kubelet: { token: '' } }, /sandbox\.kubelet\.token/],
    ['unknown key', { runId: 'r-1', pods: 1, workers: 3 }, /sandbox: unknown key\(s\) workers/],
  ];
  it.each(cases)('%s', async (_name, input, rule) => {
    const err = await configError(createSandbox(input as never));
    expect(err.code).toBe('ATTESTORM_ERR_CONFIG');
    expect(err.problems.join('\n')).toMatch(rule);
  });

  it('lists every problem at once', () => {
    let err: unknown;
    try {
      parseSandboxOptions({ runId: 'X', pods: -1, kubelet: { listen: '10.0.0.1:1', visibilityDelayMs: -5 } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems;
    expect(problems).toHaveLength(4);
    for (const path of ['sandbox.runId', 'sandbox.pods', 'sandbox.kubelet.listen', 'sandbox.kubelet.visibilityDelayMs']) {
      expect(problems.some((p) => p.startsWith(path))).toBe(true);
    }
  });

  it('fails before creating a cgroup or a temp dir', async () => {
    const runId = newRunId('badopts');
    await configError(createSandbox({ runId, pods: 0 }));
    await configError(createSandbox({ runId, pods: 1, kubelet: { listen: '192.168.1.1:0' } }));
    expect(existsSync(runTempDir(runId))).toBe(false);
    const { host, reason } = detectCgroupHost();
    if (host) expect(existsSync(join(host.memoryBase, 'attestorm', runId))).toBe(false);
    else skipNote('no cgroup is created for bad options', reason);
    if (host?.cpuBase) expect(existsSync(join(host.cpuBase, 'attestorm', runId))).toBe(false);
    else if (host) skipNote('no cpu cgroup is created for bad options', 'no v1 cpu hierarchy');
  });

  it('applies the documented defaults', () => {
    const o = parseSandboxOptions({ runId: 'r-1', pods: 2 });
    expect(o).toMatchObject({
      cgroupDriver: 'cgroupfs',
      qosClass: 'besteffort',
      namespace: 'storm',
      serviceAccount: 'storm-worker',
      labels: { app: 'storm' },
      image: 'registry.local/storm-worker:1.0',
      uidMode: 'same',
      useCgroups: 'auto',
      kubelet: { listen: '127.0.0.1:0', tls: false, latencyMs: 0, failureRate: 0, visibilityDelayMs: 0, nodeName: 'attestorm-node' },
    });
    expect(o.podLifetimeMs).toBeUndefined();
  });

  it('accepts loopback listen addresses in every spelling', () => {
    for (const listen of ['127.0.0.1:0', '127.1.2.3:10250', 'localhost:0', '[::1]:0']) {
      expect(parseSandboxOptions({ runId: 'r-1', pods: 1, kubelet: { listen } }).kubelet.listen).toBe(listen);
    }
  });
});

describe('kubelet emulator options', () => {
  it('rejects bad options with the kubelet. prefix before listening', async () => {
    const err = await configError(startKubeletEmulator({ podSource: () => [], listen: '8.8.8.8:10250' }));
    expect(err.message).toMatch(/^kubelet\.listen must be a loopback address/);
    const err2 = await configError(startKubeletEmulator({ podSource: () => [], fillerPods: -1 }));
    expect(err2.message).toMatch(/^kubelet\.fillerPods/);
  });

  it('requires a pod source', async () => {
    const err = await configError(startKubeletEmulator({} as never));
    expect(err.message).toMatch(/kubelet\.podSource must be a function/);
  });
});

describe('run ids', () => {
  it('embed the owner PID and match the runId rule', () => {
    const id = newRunId('Load Test');
    expect(id).toMatch(/^load-test-\d+-[0-9a-f]{8}$/);
    expect(ownerPidOf(id)).toBe(process.pid);
    expect(ownerPidOf('handmade')).toBeNull();
    expect(ownerPidOf('nightly-20261129-deadbeef')).toBeNull(); // a date, not a PID
    expect(ownerPidOf('run-42-x')).toBeNull(); // not the newRunId shape
    expect(ownerPidOf(newRunId('x', 4242))).toBe(4242);
    expect(parseSandboxOptions({ runId: id, pods: 1 }).runId).toBe(id);
  });
});
