// What each variant needs from the machine, checked before anything starts: a SPIRE variant's
// binaries, their release and the settings that release has. A variant whose binaries are not given
// is skipped by name with the reason; the others run and are compared.
import type { SkippedVariant } from '../contract/index.js';
import { ConfigError, PlatformError } from '../errors.js';
import { preflightSpireVariant, type SpireAgentGrammar } from '../spire/index.js';
import { selectVariants, type Scenario } from './schema.js';

export interface PreflightOutcome {
  /** The scenario without the skipped variants; SPIRE variants carry the folder that was checked. */
  scenario: Scenario;
  skipped: SkippedVariant[];
  /** Expectations about skipped variants, dropped (as selectVariants names them). */
  dropped: string[];
  /** The release grammar of each SPIRE variant, by variant name. */
  grammars: Map<string, SpireAgentGrammar>;
}

export async function preflightVariants(s: Scenario, env: NodeJS.ProcessEnv = process.env): Promise<PreflightOutcome> {
  const skipped: SkippedVariant[] = [];
  const problems: string[] = [];
  const grammars = new Map<string, SpireAgentGrammar>();
  const variants = [];
  for (const [i, v] of s.variants.entries()) {
    if (v.agent.kind !== 'spire') {
      variants.push(v);
      continue;
    }
    const where = `variants[${i}] (${v.name}).agent.`;
    const checked = await preflightSpireVariant(v.agent, where, env);
    if (checked.kind === 'skip') {
      skipped.push({ name: v.name, reason: checked.reason });
      continue;
    }
    problems.push(...checked.problems);
    grammars.set(v.name, checked.grammar);
    variants.push({ ...v, agent: { ...v.agent, binDir: checked.binDir } });
  }
  if (problems.length) throw new ConfigError(problems);
  if (variants.length === 0) throw new PlatformError(`no variant of ${s.name} can run: ${skipped.map((k) => `${k.name} skipped (${k.reason})`).join('; ')}`);
  if (!skipped.length) return { scenario: { ...s, variants }, skipped, dropped: [], grammars };
  // Expectations about a skipped variant, or comparing with one, are dropped and named.
  const picked = selectVariants({ ...s, variants }, variants.map((v) => v.name));
  return { scenario: picked.scenario, skipped, dropped: picked.dropped, grammars };
}
