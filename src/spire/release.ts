// Which SPIRE release a spire-agent is (from `spire-agent --version`) and what its configuration
// grammar offers: the settings attestorm can write for it, and a refusal naming every setting a
// variant asks for that this release does not have, before anything starts.
import { PlatformError } from '../errors.js';
import { SPIRE_RATE_LIMIT_KEYS } from './options.js';

export interface SpireVersion {
  major: number;
  minor: number;
  patch: number;
  /** What follows the number ("dev-unk" of 1.16.0-dev-unk, a git suffix); null for a release. */
  suffix: string | null;
  /** As the binary printed it. */
  text: string;
}

// 1.10.4, v1.15.3, 1.16.0-dev-unk, 1.15.2-dev-ef8527ec9: the first dotted triple of the line.
const VERSION = /\bv?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?/;

/** The version a `--version` line names; null when it names none. */
export function parseSpireVersion(text: string): SpireVersion | null {
  const m = VERSION.exec(text);
  if (!m) return null;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), suffix: m[4] ?? null, text: text.trim() };
}

/** Orders versions by their number; a development build (1.16.0-dev) counts as its number. */
export function compareVersions(a: Pick<SpireVersion, 'major' | 'minor' | 'patch'>, b: Pick<SpireVersion, 'major' | 'minor' | 'patch'>): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

const v = (s: string): SpireVersion => parseSpireVersion(s)!;
export const formatVersion = (x: Pick<SpireVersion, 'major' | 'minor' | 'patch'>): string => `${x.major}.${x.minor}.${x.patch}`;

/** The oldest release whose agent grammar attestorm's generated config has been checked against. */
export const OLDEST_KNOWN_RELEASE = v('1.10.0');

/**
 * A setting attestorm writes only for releases that have it: the scenario key a user writes,
 * where it lands in SPIRE's config, and the first release that reads it.
 */
interface GatedSetting {
  key: string;
  hcl: string;
  since: SpireVersion;
  what: string;
}

// SPIRE's Workload API limiter (agent.experimental.ratelimit, SPIRE PR #6724) shipped in 1.15.2.
// Releases before it have no ratelimit block; their HCL decoder may ignore it unnoticed.
const RATE_LIMITS_SINCE = v('1.15.2');
const GATED: readonly GatedSetting[] = SPIRE_RATE_LIMIT_KEYS.map((k) => ({
  key: `rateLimits.${k}`,
  hcl: `agent.experimental.ratelimit.${k}`,
  since: RATE_LIMITS_SINCE,
  what: "SPIRE's Workload API rate limiter",
}));

/** The config grammar of one release, as far as attestorm writes it. */
export interface SpireAgentGrammar {
  version: SpireVersion;
  /** agent.experimental.ratelimit keys this release reads (none before 1.15.2). */
  rateLimitKeys: readonly string[];
  /** Keys of the k8s workload attestor attestorm may write for this release. */
  k8sKeys: readonly string[];
}

// The k8s attestor keys attestorm writes; every release from 1.10.0 to the newest reads all of them.
const K8S_KEYS = [
  'kubelet_read_only_port',
  'kubelet_secure_port',
  'kubelet_ca_path',
  'token_path',
  'use_anonymous_authentication',
  'node_name',
  'poll_retry_interval',
  'max_poll_attempts',
] as const;

export function spireAgentGrammar(version: SpireVersion): SpireAgentGrammar {
  return {
    version,
    rateLimitKeys: compareVersions(version, RATE_LIMITS_SINCE) >= 0 ? [...SPIRE_RATE_LIMIT_KEYS] : [],
    k8sKeys: K8S_KEYS,
  };
}

/** What a variant asks of SPIRE's config, as the grammar check sees it. */
export interface SpireSettingsAsked {
  rateLimits?: Partial<Record<string, number | undefined>>;
  extraAgentConfig?: Record<string, unknown>;
}

function hasPath(tree: unknown, path: readonly string[]): boolean {
  let at: unknown = tree;
  for (const p of path) {
    if (at === null || typeof at !== 'object' || Array.isArray(at) || !(p in at)) return false;
    at = (at as Record<string, unknown>)[p];
  }
  return at !== undefined && at !== null;
}

/**
 * Every setting the variant asks for that `version` lacks, one sentence each naming the setting,
 * the release, and the first release that has it. `where` prefixes each (e.g. "variants.r1-14-7.agent.").
 */
export function grammarProblems(version: SpireVersion, asked: SpireSettingsAsked, where = ''): string[] {
  const problems: string[] = [];
  const release = `SPIRE ${formatVersion(version)} (${version.text})`;
  if (compareVersions(version, OLDEST_KNOWN_RELEASE) < 0) {
    problems.push(
      `${where.replace(/\.$/, '')}: ${release} is older than ${formatVersion(OLDEST_KNOWN_RELEASE)}, the oldest release whose configuration attestorm writes; use a build of ${formatVersion(OLDEST_KNOWN_RELEASE)} or later`,
    );
    return problems;
  }
  for (const g of GATED) {
    if (compareVersions(version, g.since) >= 0) continue;
    const [, name] = g.key.split('.');
    const value = asked.rateLimits?.[name!];
    if (value !== undefined && value > 0) {
      problems.push(
        `${where}${g.key} is set (${value}), but ${release} has no ${g.hcl}: ${g.what} first shipped in ${formatVersion(g.since)}; drop the setting for this release or use ${formatVersion(g.since)} or later`,
      );
    }
    const hclPath = g.hcl.split('.');
    if (hasPath(asked.extraAgentConfig, hclPath)) {
      problems.push(`${where}extraAgentConfig.${g.hcl} is set, but ${release} has no such setting: ${g.what} first shipped in ${formatVersion(g.since)}`);
    }
  }
  return problems;
}

/** The version a binary printed, or a PlatformError naming the binary and what it printed. */
export function versionOf(binary: string, printed: string): SpireVersion {
  const version = parseSpireVersion(printed);
  if (!version)
    throw new PlatformError(`${binary} --version printed ${JSON.stringify(printed)}, which names no version (expected e.g. 1.15.3); is it a spire-agent?`);
  return version;
}
