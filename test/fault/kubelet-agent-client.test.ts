// The agent's own kubelet client (keep-alive, timeouts) against the real emulator while the
// scheduler runs each kubelet fault: what the agent sees during the fault, and that it gets the pod
// list again once the fault ends (down drops its kept-alive connection; stall's is destroyed).
import { afterEach, describe, expect, it } from 'vitest';
import { createKubeletClient, KubeletError, type KubeletClient } from '../../src/agent/kubelet-client.js';
import { FaultScheduler, parseFaults, type FaultInput, type FaultTarget } from '../../src/fault/index.js';
import { startKubeletEmulator, type KubeletEmulator } from '../../src/sandbox/index.js';
import { stormPodDoc } from '../support/storm-pod.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const pod = stormPodDoc({ uid: crypto.randomUUID(), containerID: 'cd'.repeat(32) });

async function setup(): Promise<{ kubelet: KubeletEmulator; client: KubeletClient; lookup(): Promise<string> }> {
  const kubelet = await startKubeletEmulator({ podSource: () => [pod], fillerPods: 5 });
  cleanups.push(() => kubelet.close());
  const client = createKubeletClient({ url: kubelet.url, timeoutMs: 300, pollIntervalMs: 20, maxPollAttempts: 1 });
  cleanups.push(() => client.close());
  const lookup = () =>
    client
      .waitFor((l) => l.byUid.get(pod.metadata.uid), 'pod')
      .then(
        () => 'found',
        (e: unknown) => (e instanceof KubeletError ? e.reason : String(e)),
      );
  return { kubelet, client, lookup };
}

/** Runs one fault from now for `for`, looks the pod up in the middle of it and after it. */
async function during(fault: FaultInput, kubelet: KubeletEmulator, lookup: () => Promise<string>): Promise<[string, string]> {
  const target: FaultTarget = { socket: '/nonexistent', agentPid: () => null, agentCgroup: null, kubelet: kubelet.faults, waitAgentAnswers: async () => {} };
  const sched = new FaultScheduler({ faults: parseFaults([fault]), target, loadStart: Date.now() });
  sched.start();
  await sleep(50);
  const mid = await lookup();
  const [record] = await sched.stop();
  expect(record!.error).toBeUndefined();
  return [mid, await lookup()];
}

describe("the agent's kubelet client under kubelet faults", () => {
  it('errors: HTTP 500 is a status failure, then the list again', async () => {
    const { kubelet, lookup } = await setup();
    expect(await lookup()).toBe('found');
    expect(await during({ at: 0, for: '10s', action: 'kubelet-errors', rate: 1 }, kubelet, lookup)).toEqual(['status', 'found']);
  });

  it('latency past the client timeout is a timeout, then the list again', async () => {
    const { kubelet, lookup } = await setup();
    expect(await during({ at: 0, for: '10s', action: 'kubelet-latency', value: '2s' }, kubelet, lookup)).toEqual(['timeout', 'found']);
  });

  it('down: the kept-alive connection is dropped and new ones refused, then the list again on the same port', async () => {
    const { kubelet, lookup } = await setup();
    expect(await lookup()).toBe('found');
    expect(await during({ at: 0, for: '10s', action: 'kubelet-down' }, kubelet, lookup)).toEqual(['unreachable', 'found']);
  });

  it('stall: the request hangs until the client times out, then the list again', async () => {
    const { kubelet, lookup } = await setup();
    expect(await lookup()).toBe('found');
    expect(await during({ at: 0, for: '10s', action: 'kubelet-stall' }, kubelet, lookup)).toEqual(['timeout', 'found']);
    expect(kubelet.stats().stalled).toBeGreaterThanOrEqual(1);
  });
});
