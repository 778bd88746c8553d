// Real spire-server and spire-agent (from SPIRE_BIN_DIR) against real sandbox pods: the agent's k8s
// attestor reads the kubelet emulator, a pod process receives its JWT-SVID, SPIRE's own limiter
// rejects a burst (classified by the generator's rule), its metrics are read, an agent restart
// needs a new join token, and every failure path says why and leaves nothing running.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { ChildProcessError, RunError, TimeoutError } from '../../src/errors.js';
import { classify } from '../../src/load/worker/policy.js';
import { PROTO_PATH } from '../../src/proto/index.js';
import { createSandbox, newRunId, type Sandbox, type SandboxPod } from '../../src/sandbox/index.js';
import {
  findSpireBinaries,
  kubeletAccessFor,
  prepareSpireAgent,
  probeSvid,
  scrapeSpireMetrics,
  spireVersion,
  startSpireAgent,
  startSpireServer,
  workloadIdFor,
  type ProbeSpawn,
  type RunningSpireAgent,
  type SpireAgentPlan,
  type SpireBinaries,
  type SpireServer,
} from '../../src/spire/index.js';

const BIN_DIR = process.env.SPIRE_BIN_DIR;
const { host, reason: cgroupReason } = detectCgroupHost();
const skipReason = !BIN_DIR
  ? 'SPIRE_BIN_DIR is unset (point it at a folder with spire-server and spire-agent to run these)'
  : !host
    ? `no writable cgroups: ${cgroupReason}`
    : null;
if (skipReason) console.warn(`test/spire/spire-local.slow.test.ts skipped: ${skipReason}`);

const FIXTURE = join(import.meta.dirname, 'fixtures', 'jwt-burst.mjs');

/** The probe inside a sandbox pod: its cgroup and uid, so the k8s attestor resolves the pod. */
const inPod =
  (sandbox: Sandbox, pod: SandboxPod): ProbeSpawn =>
  (command, args, options) =>
    sandbox.spawnInPod(pod, command, args, options);

interface Answer {
  code: number;
  details: string;
}

describe.skipIf(skipReason !== null)('real SPIRE against sandbox pods', () => {
  let bins: SpireBinaries;
  let dir: string;
  let outDir: string;
  let sb: Sandbox;
  let server: SpireServer;
  let plan: SpireAgentPlan;
  const mains = new Map<string, ChildProcess>();
  const agents: RunningSpireAgent[] = [];

  beforeAll(async () => {
    bins = findSpireBinaries({ binDir: BIN_DIR });
    dir = mkdtempSync(join(tmpdir(), 'atsp-'));
    outDir = join(dir, 'out');
    sb = await createSandbox({ runId: newRunId('spire'), pods: 3 });
    await sb.startPods((pod) => {
      const child = sb.spawnInPod(pod, process.execPath, [FIXTURE, join(dir, 'agent', 'workload', 'api.sock'), PROTO_PATH], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      mains.set(pod.uid, child);
      return child;
    });
    server = await startSpireServer({
      binary: bins.server,
      dir: join(dir, 'server'),
      outDir,
      trustDomain: 'attestorm.test',
      env: { ATTESTORM_RUN_ID: sb.runId },
    });
    // The third pod stays unregistered: it must be refused.
    const registered = await server.registerPods(sb.pods().slice(0, 2));
    expect(registered).toBe(2);
    expect(await server.registerPods(sb.pods().slice(0, 2))).toBe(0);
    plan = await prepareSpireAgent({
      binary: bins.agent,
      trustDomain: server.trustDomain,
      serverPort: server.port,
      bundlePem: await server.bundlePem(),
      dir: join(dir, 'agent'),
      outDir,
      kubelet: kubeletAccessFor(sb.kubeletUrl, { caFile: sb.caFile, tokenFile: sb.tokenFile }),
      rateLimits: { fetch_jwt_svid: 2 },
      k8s: { pollRetryIntervalMs: 200 },
      env: { ATTESTORM_RUN_ID: sb.runId },
    });
  }, 120_000);

  afterAll(async () => {
    for (const a of agents) await a.close();
    await server?.close();
    await sb?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const podOf = (i: number): SandboxPod => sb.pods().find((p) => p.index === i)!;

  function burst(pod: SandboxPod, n: number): Promise<Answer[]> {
    const main = mains.get(pod.uid)!;
    return new Promise((resolve) => {
      const onMsg = (m: { type: string; answers?: Answer[] }) => {
        if (m.type !== 'answers') return;
        main.off('message', onMsg);
        resolve(m.answers!);
      };
      main.on('message', onMsg);
      main.send({ type: 'go', n });
    });
  }

  it('both binaries report a version', async () => {
    expect(await spireVersion(bins.server)).toMatch(/^\d+\.\d+\.\d+/);
    expect(await spireVersion(bins.agent)).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('a pod receives its own JWT-SVID once the entries reach the agent; SPIRE announced its limiter', async () => {
    const agent = await startSpireAgent(plan, { token: await server.joinToken(), logFile: join(outDir, 'agent.log') });
    agents.push(agent);
    const pod = podOf(0);
    const got = await probeSvid({ spawn: inPod(sb, pod), label: `pod ${pod.name}`, socket: plan.socketPath, timeoutMs: 60_000 });
    expect(got.spiffeId).toBe(workloadIdFor(server.trustDomain, pod));
    console.log(`first SVID after ${got.afterMs} ms, ${got.attempts} attempts`);
    const log = readFileSync(agent.logFile, 'utf8');
    expect(log).toMatch(/rate limiting enabled.*FetchJWTSVID|FetchJWTSVID.*rate limiting enabled/);
    expect(existsSync(join(outDir, 'agent.conf'))).toBe(true);
    expect(existsSync(join(outDir, 'server.conf'))).toBe(true);
    // The run's ID in both environments: `attestorm cleanup` finds them if the owner is SIGKILLed.
    for (const pid of [server.pid!, agent.pid!]) expect(readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0')).toContain(`ATTESTORM_RUN_ID=${sb.runId}`);
  });

  it("SPIRE's limiter rejects a burst with UNAVAILABLE 'rate limit exceeded', which the generator counts as rateLimited", async () => {
    const answers = await burst(podOf(1), 20);
    const outcomes = answers.map((a) => classify(a.code, a.details));
    const limited = outcomes.filter((o) => o === 'rateLimited').length;
    console.log(
      `burst of 20: ${outcomes.filter((o) => o === 'ok').length} ok, ${limited} rateLimited, details e.g. ${JSON.stringify(answers.find((a) => a.code !== 0)?.details)}`,
    );
    expect(limited).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o === 'error' || o === 'deadlineExceeded')).toEqual([]);
    expect(answers.filter((a) => a.code !== 0).every((a) => a.code === 14)).toBe(true);

    const m = await scrapeSpireMetrics(plan.metricsUrl, 0);
    expect(m).not.toBeNull();
    expect(m!.spire.rateLimitedByMethod['/SpiffeWorkloadAPI/FetchJWTSVID']).toBeGreaterThanOrEqual(limited);
    expect(m!.rejectedByKeyType['selector-set']).toBeGreaterThanOrEqual(limited);
    expect(m!.spire.fetchJwtSvidByStatus.OK).toBeGreaterThan(0);
    expect(m!.openConnections).not.toBeNull();
    expect(m!.spire.connectionsOpened).toBeGreaterThan(0);
    expect(m!.spire.attestationsByStatus.OK).toBeGreaterThan(0);
    expect(m!.spire.attestorCalls['k8s/OK']).toBeGreaterThan(0);
  });

  it('a pod without an entry gets no SVID: the probe times out quoting PERMISSION_DENIED', async () => {
    const pod = podOf(2);
    const err = await probeSvid({ spawn: inPod(sb, pod), label: `pod ${pod.name}`, socket: plan.socketPath, timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as Error).message).toMatch(new RegExp(`pod ${pod.name} received no JWT-SVID .* within 2000 ms .*last answer PERMISSION_DENIED`));
  });

  it('after a restart the agent attests with a new token and pods get SVIDs again; a used token is refused', async () => {
    const first = agents.pop()!;
    await first.close();
    const token = await server.joinToken();
    const again = await startSpireAgent(plan, { token, logFile: join(outDir, 'agent.log') });
    agents.push(again);
    const pod = podOf(0);
    const got = await probeSvid({ spawn: inPod(sb, pod), label: `pod ${pod.name}`, socket: plan.socketPath, timeoutMs: 60_000 });
    expect(got.spiffeId).toBe(workloadIdFor(server.trustDomain, pod));
    console.log(`after restart: SVID after ${got.afterMs} ms`);
    await again.close();
    agents.pop();
    // The same token a second time: SPIRE refuses it (and would retry forever); the start fails
    // at once, quoting the agent's log.
    const t0 = Date.now();
    const err = await startSpireAgent(plan, { token, logFile: join(outDir, 'agent-reused.log'), startTimeoutMs: 20_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChildProcessError);
    expect((err as Error).message).toMatch(
      /spire-agent .* cannot become ready: the server refused its join token \(join token does not exist or has already been used\).*Last lines of .*agent-reused\.log/s,
    );
    expect(Date.now() - t0).toBeLessThan(20_000);
    console.log(`reused token: ${(err as Error).message.split('\n').slice(0, 4).join(' / ')}`);
  });

  it("a bad extra setting stops the agent at start with SPIRE's own words", async () => {
    const bad = await prepareSpireAgent({
      binary: bins.agent,
      trustDomain: server.trustDomain,
      serverPort: server.port,
      bundlePem: await server.bundlePem(),
      dir: join(dir, 'agent-bad'),
      outDir: join(dir, 'out-bad'),
      kubelet: kubeletAccessFor(sb.kubeletUrl),
      extraConfig: { agent: { no_such_key: true } },
    });
    const err = await startSpireAgent(bad, { token: await server.joinToken(), logFile: join(dir, 'out-bad', 'agent.log') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChildProcessError);
    expect((err as Error).message).toContain('no_such_key');
  });

  it('entries of ended pods are deleted (by the IDs SPIRE returned) and can be created again', async () => {
    const pod = podOf(2);
    expect(await server.unregisterPods([pod.uid])).toBe(0); // never registered
    expect(await server.registerPods([pod])).toBe(1);
    const live = server.registeredPods;
    expect(await server.unregisterPods([pod.uid])).toBe(1);
    expect(server.registeredPods).toBe(live - 1);
    expect(await server.registerPods([pod])).toBe(1);
    expect(await server.unregisterPods([pod.uid])).toBe(1);
  });

  it('entries SPIRE refuses are reported as a RunError naming them', async () => {
    const err = await server.registerPods([{ uid: 'not a uid', name: 'bad pod', namespace: 'x y' }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunError);
    console.log(`refused entry: ${(err as Error).message.split('\n')[0]}`);
  });
});

describe.skipIf(skipReason !== null)("SPIRE's k8s attestor on the kubelet emulator's secure port", () => {
  it('verifies the emulator with its CA, sends its bearer token, and the pod gets its SVID', async () => {
    const bins = findSpireBinaries({ binDir: BIN_DIR });
    const dir = mkdtempSync(join(tmpdir(), 'atsp-'));
    const sb = await createSandbox({ runId: newRunId('spiretls'), pods: 1, kubelet: { tls: true, token: 'node-token' } });
    let server: SpireServer | null = null;
    let agent: RunningSpireAgent | null = null;
    try {
      await sb.startPods((pod) =>
        sb.spawnInPod(pod, process.execPath, [FIXTURE, join(dir, 'agent', 'workload', 'api.sock'), PROTO_PATH], {
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        }),
      );
      server = await startSpireServer({ binary: bins.server, dir: join(dir, 'server'), outDir: join(dir, 'out'), trustDomain: 'attestorm.test' });
      await server.registerPods(sb.pods());
      const access = kubeletAccessFor(sb.kubeletUrl, { caFile: sb.caFile, tokenFile: sb.tokenFile });
      expect(access).toMatchObject({ mode: 'secure', host: '127.0.0.1', tokenFile: sb.tokenFile });
      const plan = await prepareSpireAgent({
        binary: bins.agent,
        trustDomain: server.trustDomain,
        serverPort: server.port,
        bundlePem: await server.bundlePem(),
        dir: join(dir, 'agent'),
        outDir: join(dir, 'out'),
        kubelet: access,
      });
      agent = await startSpireAgent(plan, { token: await server.joinToken(), logFile: join(dir, 'out', 'agent.log') });
      const pod = sb.pods()[0]!;
      const got = await probeSvid({ spawn: inPod(sb, pod), label: `pod ${pod.name}`, socket: plan.socketPath, timeoutMs: 60_000 });
      expect(got.spiffeId).toBe(workloadIdFor(server.trustDomain, pod));
      const stats = sb.kubelet.stats();
      expect(stats.podsServed).toBeGreaterThan(0);
      expect(stats.unauthorized).toBe(0);
    } finally {
      await agent?.close();
      await server?.close();
      await sb.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
