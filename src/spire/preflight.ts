// Before anything starts: which spire-agent a variant will run (its folder, from binDir or the
// environment variable it names), which release that binary is, and whether the variant asks for
// a setting this release lacks. A variant whose variable is unset is skipped, with the reason.
import { dirname } from 'node:path';
import { AttestormError, PreflightFailure } from '../errors.js';
import { findSpireBinaries, spireVersion, type SpireBinaries } from './binaries.js';
import { formatVersion, grammarProblems, spireAgentGrammar, versionOf, type SpireAgentGrammar, type SpireSettingsAsked } from './release.js';

export interface SpireVariantAsked extends SpireSettingsAsked {
  binDir?: string;
  binDirEnv?: string;
  release?: string;
}

export type SpirePreflight =
  | { kind: 'skip'; reason: string }
  /** Problems: every setting this release lacks and a release mismatch, one sentence each. */
  | { kind: 'checked'; binDir: string; grammar: SpireAgentGrammar; problems: string[] };

/** Go's name for this machine's architecture, as SPIRE's release archives are named (linux-amd64). */
const GOARCH: Partial<Record<NodeJS.Architecture, string>> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', s390x: 's390x', ppc64: 'ppc64le' };

function spireFix(where: string): string {
  return `point ${where}binDir (or SPIRE_BIN_DIR) at a folder with spire-server and spire-agent built for this host (linux-${GOARCH[process.arch] ?? process.arch}), e.g. a release's linux-${GOARCH[process.arch] ?? process.arch} archive unpacked`;
}

/** Both binaries found, and each run once with --version: the agent's version line, or the failure naming each that does not run. */
async function runBoth(binDir: string | undefined, where: string, env: NodeJS.ProcessEnv): Promise<{ bins: SpireBinaries; agentVersion: string }> {
  let bins: SpireBinaries;
  try {
    bins = findSpireBinaries(binDir !== undefined ? { binDir } : { env });
  } catch (err) {
    throw new PreflightFailure('ATTESTORM_ERR_SPIRE_BINARY', `${where.replace(/\.$/, '')}: ${(err as Error).message}`, spireFix(where), { cause: err });
  }
  const [server, agent] = await Promise.allSettled([spireVersion(bins.server), spireVersion(bins.agent)]);
  const failed = [server, agent].filter((r) => r.status === 'rejected').map((r) => (r.reason as AttestormError).message ?? String(r.reason));
  if (failed.length || agent.status !== 'fulfilled')
    throw new PreflightFailure(
      'ATTESTORM_ERR_SPIRE_BINARY',
      `${where.replace(/\.$/, '')}: SPIRE does not run on this host: ${failed.join('; ')}`,
      spireFix(where),
    );
  return { bins, agentVersion: agent.value };
}

/**
 * `where` prefixes each problem with the variant's path (e.g. "variants.r1-14-7.agent."). Missing
 * binaries, or ones that do not run here (`--version` fails: another architecture, a missing
 * loader), throw a PreflightFailure naming the variant, the binary and the fix.
 */
export async function preflightSpireVariant(asked: SpireVariantAsked, where: string, env: NodeJS.ProcessEnv = process.env): Promise<SpirePreflight> {
  let binDir = asked.binDir;
  if (binDir === undefined && asked.binDirEnv !== undefined) {
    const value = env[asked.binDirEnv];
    if (value === undefined || value === '') {
      return {
        kind: 'skip',
        reason: `$${asked.binDirEnv} is ${value === undefined ? 'not set' : 'empty'}: it names the folder of this variant's spire-server and spire-agent (or give ${where}binDir)`,
      };
    }
    binDir = value;
  }
  const { bins, agentVersion } = await runBoth(binDir, where, env);
  const version = versionOf(bins.agent, agentVersion);
  const problems: string[] = [];
  if (asked.release !== undefined && formatVersion(version) !== asked.release) {
    problems.push(
      `${where}release is ${asked.release}, but ${bins.agent} --version says ${JSON.stringify(version.text)}; point the variant at a ${asked.release} build`,
    );
  }
  problems.push(...grammarProblems(version, asked, where));
  return { kind: 'checked', binDir: dirname(bins.agent), grammar: spireAgentGrammar(version), problems };
}
