// Before anything starts: which spire-agent a variant will run (its folder, from binDir or the
// environment variable it names), which release that binary is, and whether the variant asks for
// a setting this release lacks. A variant whose variable is unset is skipped, with the reason.
import { dirname } from 'node:path';
import { findSpireBinaries, spireVersion } from './binaries.js';
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

/**
 * `where` prefixes each problem with the variant's path (e.g. "variants.r1-14-7.agent."). Missing
 * or unusable binaries throw PlatformError (findSpireBinaries names every place searched).
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
  const bins = findSpireBinaries(binDir !== undefined ? { binDir } : { env });
  const version = versionOf(bins.agent, await spireVersion(bins.agent));
  const problems: string[] = [];
  if (asked.release !== undefined && formatVersion(version) !== asked.release) {
    problems.push(
      `${where}release is ${asked.release}, but ${bins.agent} --version says ${JSON.stringify(version.text)}; point the variant at a ${asked.release} build`,
    );
  }
  problems.push(...grammarProblems(version, asked, where));
  return { kind: 'checked', binDir: dirname(bins.agent), grammar: spireAgentGrammar(version), problems };
}
