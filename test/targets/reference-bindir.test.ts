// A reference variant with a binDir of its own: its attestorm-agent checked before anything starts,
// the folder carried to the run as an absolute path, and refused in a cluster.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { parseScenario, preflightVariants } from '../../src/scenario/index.js';
import { targetKind } from '../../src/targets/index.js';

const root = mkdtempSync(join(tmpdir(), 'attestorm-ref-bindir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const scenarioWith = (binDir: string) =>
  parseScenario({
    name: 's',
    agent: { binDir: '/opt/spire/1.15.3' },
    variants: [
      { name: 'built', agent: { placement: 'pre-attestation', binDir } },
      { name: 'bundled', agent: { placement: 'disabled' } },
    ],
  }).scenario;

describe('reference agent binDir', () => {
  it('runs the folder’s attestorm-agent when it is executable; the shared block’s binDir (a SPIRE folder) is not inherited', async () => {
    const dir = join(root, 'ok');
    mkdirSync(dir);
    writeFileSync(join(dir, 'attestorm-agent'), '#!/bin/sh\nexec "$ATTESTORM_NODE" "$ATTESTORM_AGENT_BUNDLE" "$@"\n');
    chmodSync(join(dir, 'attestorm-agent'), 0o755);
    const { scenario } = await preflightVariants(scenarioWith(join(root, 'ok', '..', 'ok')));
    expect((scenario.variants[0]!.agent as { binDir?: string }).binDir).toBe(dir);
    expect((scenario.variants[1]!.agent as { binDir?: string }).binDir).toBeUndefined();
  });

  it('names a folder without the program, or with one that cannot be run, before anything starts', async () => {
    const empty = join(root, 'empty');
    mkdirSync(empty);
    await expect(preflightVariants(scenarioWith(empty))).rejects.toThrow(
      new ConfigError(`variants[0] (built).agent.binDir ${empty}: no attestorm-agent in it; the folder must hold the program to run`),
    );
    const noexec = join(root, 'noexec');
    mkdirSync(noexec);
    writeFileSync(join(noexec, 'attestorm-agent'), '#!/bin/sh\n');
    chmodSync(join(noexec, 'attestorm-agent'), 0o644);
    // root may execute nothing without an x bit either: access(X_OK) says so for everyone.
    await expect(preflightVariants(scenarioWith(noexec))).rejects.toThrow(/attestorm-agent is not executable \(EACCES\)/);
  });

  it('is refused in a cluster, which runs the project’s image', () => {
    const agent = scenarioWith('/opt/x').variants[0]!.agent;
    expect(() => targetKind('reference').cluster(agent, 'built', { socket: '/s', kubeletUrl: 'http://k' })).toThrow(
      /variants\.built\.agent\.binDir: .* runs on this machine only/,
    );
  });
});
