// What CI needs to correlate runs across builds: the project's commit (when run from a checkout),
// the tool's version, a hash of the resolved scenario and the machine it ran on. The runner stores
// it in results.json as `provenance`.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import os from 'node:os';

export interface Provenance {
  /** Null when the project is not a git checkout (an npm install, a tarball) or git is absent. */
  git: { commit: string; dirty: boolean; branch: string | null } | null;
  tool: { name: 'attestorm'; version: string };
  /** "sha256:<hex>" of the resolved scenario as canonical JSON (keys sorted): equal hashes, equal settings. */
  scenarioHash: string;
  machine: {
    hostname: string;
    platform: string;
    release: string;
    arch: string;
    cpus: number;
    cpuModel: string | null;
    memoryBytes: number;
    nodeVersion: string;
  };
  /** CI system facts when present in the environment (GitHub Actions), else null. */
  ci: { system: 'github-actions'; repository: string | null; runId: string | null; runAttempt: string | null; sha: string | null; ref: string | null } | null;
}

export interface ProvenanceOptions {
  /** The project's root folder (where package.json is). */
  projectRoot: string;
  toolVersion: string;
  /** The fully resolved scenario (results.scenario.resolved). */
  resolvedScenario: unknown;
  env?: NodeJS.ProcessEnv;
}

/** JSON with object keys sorted at every level, so equal settings hash equally whatever the key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(
      Object.keys(v as object)
        .sort()
        .map((k) => [k, (v as Record<string, unknown>)[k]]),
    );
  });
}

export function scenarioHash(resolved: unknown): string {
  return `sha256:${createHash('sha256')
    .update(canonicalJson(resolved ?? null))
    .digest('hex')}`;
}

const GIT_TIMEOUT_MS = 5000;

function git(cwd: string, args: string[]): string | null {
  try {
    return execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8', timeout: GIT_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/**
 * The checkout's HEAD, whether tracked files differ from it, and the branch. Null unless projectRoot
 * is the top of a work tree: an attestorm installed inside some other repository must not report
 * that repository's commit.
 */
export function gitProvenance(projectRoot: string): Provenance['git'] {
  const top = git(projectRoot, ['rev-parse', '--show-toplevel']);
  if (!top) return null;
  let same: boolean;
  try {
    same = realpathSync(top) === realpathSync(projectRoot);
  } catch {
    same = false;
  }
  if (!same) return null;
  const commit = git(projectRoot, ['rev-parse', 'HEAD']);
  if (!commit || !/^[0-9a-f]{40,64}$/.test(commit)) return null;
  const status = git(projectRoot, ['status', '--porcelain', '--untracked-files=no']);
  const branch = git(projectRoot, ['symbolic-ref', '--short', '-q', 'HEAD']);
  return { commit, dirty: status === null ? true : status.length > 0, branch: branch || null };
}

export function collectProvenance(opts: ProvenanceOptions): Provenance {
  const env = opts.env ?? process.env;
  const cpus = os.cpus();
  return {
    git: gitProvenance(opts.projectRoot),
    tool: { name: 'attestorm', version: opts.toolVersion },
    scenarioHash: scenarioHash(opts.resolvedScenario),
    machine: {
      hostname: os.hostname(),
      platform: process.platform,
      release: os.release(),
      arch: process.arch,
      cpus: cpus.length,
      cpuModel: cpus[0]?.model?.trim() || null,
      memoryBytes: os.totalmem(),
      nodeVersion: process.version,
    },
    ci:
      env['GITHUB_ACTIONS'] === 'true'
        ? {
            system: 'github-actions',
            repository: env['GITHUB_REPOSITORY'] ?? null,
            runId: env['GITHUB_RUN_ID'] ?? null,
            runAttempt: env['GITHUB_RUN_ATTEMPT'] ?? null,
            sha: env['GITHUB_SHA'] ?? null,
            ref: env['GITHUB_REF'] ?? null,
          }
        : null,
  };
}

/** Reads `provenance` from a results.json that may predate it. */
export function provenanceOf(results: unknown): Partial<Provenance> | null {
  const p = (results as { provenance?: unknown } | null)?.provenance;
  return p && typeof p === 'object' ? (p as Partial<Provenance>) : null;
}
