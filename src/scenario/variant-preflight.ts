// What each variant needs from the machine, checked before anything starts by its kind (a SPIRE
// variant's binaries, their release and the settings that release has). A variant its kind skips
// is named with the reason; the others run and are compared.
import type { SkippedVariant } from '../contract/index.js';
import { ConfigError, PlatformError, PreflightError, PreflightFailure } from '../errors.js';
import { targetKind, type VariantAgent } from '../targets/index.js';
import { selectVariants, type Scenario } from './schema.js';

export interface PreflightOutcome {
  /** The scenario without the skipped variants; SPIRE variants carry the folder that was checked. */
  scenario: Scenario;
  skipped: SkippedVariant[];
  /** Expectations about skipped variants, dropped (as selectVariants names them). */
  dropped: string[];
}

/**
 * `machine`: what the platform found this machine lacks; with the variants' own failures (a SPIRE
 * binary that does not run here) they are thrown together as one PreflightError, after the
 * scenario's problems (ConfigError) and before anything starts.
 */
export async function preflightVariants(
  s: Scenario,
  env: NodeJS.ProcessEnv = process.env,
  machine: readonly PreflightFailure[] = [],
): Promise<PreflightOutcome> {
  const skipped: SkippedVariant[] = [];
  const problems: string[] = [];
  const failures: PreflightFailure[] = [...machine];
  const variants = [];
  for (const [i, v] of s.variants.entries()) {
    const kind = targetKind(v.agent.kind);
    if (!kind.preflight) {
      variants.push(v);
      continue;
    }
    const checked = await kind.preflight(v.agent, `variants[${i}] (${v.name}).agent.`, env).catch((err: unknown) => {
      if (!(err instanceof PreflightFailure)) throw err;
      failures.push(err);
      return null;
    });
    if (checked === null) continue;
    if ('skip' in checked) {
      skipped.push({ name: v.name, reason: checked.skip });
      continue;
    }
    problems.push(...checked.problems);
    variants.push({ ...v, agent: checked.agent as VariantAgent });
  }
  if (problems.length) throw new ConfigError(problems);
  if (failures.length) throw new PreflightError(failures);
  if (variants.length === 0) throw new PlatformError(`no variant of ${s.name} can run: ${skipped.map((k) => `${k.name} skipped (${k.reason})`).join('; ')}`);
  if (!skipped.length) return { scenario: { ...s, variants }, skipped, dropped: [] };
  // Expectations about a skipped variant, or comparing with one, are dropped and named.
  const picked = selectVariants(
    { ...s, variants },
    variants.map((v) => v.name),
  );
  return { scenario: picked.scenario, skipped, dropped: picked.dropped };
}
