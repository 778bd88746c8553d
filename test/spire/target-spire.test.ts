// The spire target without SPIRE installed: registered under its kind, it reports the effective
// placement from its limits, and a missing binary fails the start with a PlatformError naming where
// it looked, before any SPIRE process or cgroup exists.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PlatformError } from '../../src/errors.js';
import { parseScenario, type SpireAgent } from '../../src/scenario/index.js';
import { createTarget, targetKinds, type TargetContext } from '../../src/targets/index.js';

const dir = mkdtempSync(join(tmpdir(), 'attestorm-spire-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function spireAgent(agent: Record<string, unknown>): SpireAgent {
  const loaded = parseScenario({
    name: 't',
    duration: '1s',
    variants: [{ name: 's', agent: { kind: 'spire', ...agent } }],
    load: { pods: 1, workersPerPod: 1 },
  });
  return loaded.scenario.variants[0]!.agent as SpireAgent;
}

// Nothing here may be touched before the binaries are found: a context whose parts throw proves it.
const untouchable = new Proxy(
  {},
  {
    get: (_t, p) => {
      throw new Error(`the target touched ctx.sandbox.${String(p)} before finding its binaries`);
    },
  },
);
const ctx = (): TargetContext => ({
  variant: 's',
  rep: 1,
  dir,
  tmpDir: dir,
  runId: 'unit-1-00000000',
  host: null,
  sandbox: untouchable as never,
  signal: new AbortController().signal,
  event: () => {},
  onDeath: () => {},
});

describe('spire target', () => {
  it('is registered as the spire kind', () => {
    expect(targetKinds()).toContain('spire');
  });

  it('records post-attestation / selector-set with limits, disabled without (0 counts as no limit)', () => {
    expect(createTarget(spireAgent({ rateLimits: { fetch_jwt_svid: 10 } }), ctx()).describe()).toMatchObject({
      kind: 'spire',
      placement: 'post-attestation',
      key: 'selector-set',
    });
    expect(createTarget(spireAgent({}), ctx()).describe()).toMatchObject({ kind: 'spire', placement: 'disabled', key: null });
    expect(createTarget(spireAgent({ rateLimits: { fetch_jwt_svid: 0 } }), ctx()).describe()).toMatchObject({ placement: 'disabled' });
  });

  it('a missing binary fails start() with a PlatformError naming the folder, before anything starts', async () => {
    const target = createTarget(spireAgent({ binDir: join(dir, 'no-spire-here') }), ctx());
    const err = await target.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect((err as Error).message).toMatch(/spire-server not found: looked in binDir .*no-spire-here/);
    await target.stop();
    expect(target.pid()).toBeNull();
    expect(target.cgroup()).toBeNull();
  });
});
