// The runner and one variant's run through the LoadDriver seam: the real runner, targets, samplers,
// sandbox and cgroups, with a scripted load (real gRPC calls from this process) instead of a storm.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectCgroupHost } from '../../src/cgroup/index.js';
import { parseScenario, Progress, runScenario, type LoadDriver } from '../../src/scenario/index.js';
import { pidsWithArg, scriptedLoad } from './support/scripted-load.js';

const out = mkdtempSync(join(tmpdir(), 'attestorm-runner-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const { host, reason } = detectCgroupHost();
if (!host) console.warn(`runner tests: agents run without a memory cgroup (${reason}); OOMs are emulated`);

const quiet = () => ({ progress: new Progress({ tty: false, stream: { write: () => true } as never }), tableStream: { write: () => true } as never, render: false, command: 'test' });
const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

/** A small scenario: the reference agent with the unix attestor, one pod, the given variants and expectations. */
function scenario(name: string, extra: Record<string, unknown> = {}) {
  return parseScenario({
    name,
    duration: '2s',
    warmup: '0s',
    agent: { memoryLimit: '256Mi', attestors: ['unix'], rateLimits: { fetch_jwt_svid: 2 }, startTimeout: '60s', restart: { initialBackoff: '200ms' } },
    load: { pods: 1, workersPerPod: 1 },
    variants: [{ name: 'pre', agent: { placement: 'pre-attestation', key: 'os-uid' } }],
    ...extra,
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGKILLs the agent started with this config file and waits until the supervisor has started a new one. */
async function killAgentAndWaitRestart(configFile: string): Promise<void> {
  const [pid] = pidsWithArg(configFile);
  expect(pid, `an agent process started with ${configFile}`).toBeDefined();
  process.kill(pid!, 'SIGKILL');
  for (let i = 0; i < 600; i++) {
    if (pidsWithArg(configFile).some((p) => p !== pid)) return;
    await sleep(50);
  }
  throw new Error(`the agent of ${configFile} was not restarted within 30 s`);
}

const run = (name: string, load: LoadDriver, extra: Record<string, unknown> = {}) => runScenario({ loaded: scenario(name, extra), load, outDir: join(out, name), ...quiet() });
const agentConfig = (name: string, variant: string, rep = 1) => join(out, name, `${variant}.r${rep}`, 'agent.yaml');

describe('rejection totals', () => {
  it('count the rejections made after the last metrics scrape before the agent died', async () => {
    let rejected = 0;
    const load = scriptedLoad(async ({ burst }) => {
      // Scrapes run once a second from the load's start: the burst and the kill fall between two.
      rejected = (await burst(30)).filter((o) => o === 'rateLimited').length;
      await killAgentAndWaitRestart(agentConfig('rej-death', 'pre'));
    });
    const { results } = await run('rej-death', load);
    const v = results.variants[0]!;
    expect(v.error).toBeUndefined();
    expect(rejected).toBeGreaterThan(20);
    expect(v.deaths.length).toBeGreaterThanOrEqual(1);
    // Every rejection the calls saw is in the totals; what no scrape saw has no key type.
    expect(sum(v.rejectionsByKeyType)).toBe(rejected);
    expect(v.rejectionsByKeyType.unattributed ?? 0).toBeGreaterThan(0);
  });
});

describe('completeRejections', () => {
  it('adds what the generator counted beyond the scrapes as unattributed, never removes scraped counts', async () => {
    const { completeRejections, RejectionTotals, UNATTRIBUTED } = await import('../../src/scenario/index.js');
    const t = new RejectionTotals();
    t.observe({ rejectedByKeyType: { os_uid: 5 } });
    t.observe({ rejectedByKeyType: { os_uid: 9 } });
    // A restarted agent starts from 0: the first lifetime's 9 are banked.
    t.observe({ rejectedByKeyType: { os_uid: 2 } });
    expect(t.scraped()).toEqual({ os_uid: 11 });
    expect(completeRejections(t.scraped(), 15)).toEqual({ os_uid: 11, [UNATTRIBUTED]: 4 });
    expect(completeRejections({ os_uid: 11 }, 7)).toEqual({ os_uid: 11 });
    expect(completeRejections({}, 0)).toEqual({});
  });
});
