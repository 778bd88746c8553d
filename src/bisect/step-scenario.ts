// The scenario one step runs: the user's file with their --set settings, the named variant alone
// with the step's build as its agent.binDir, the variant's release check and binary variable
// dropped (a step builds a commit, not a release). Checked once before the first build, with a
// stand-in folder, so that a bad scenario or variant fails before minutes of building.
import { ConfigError } from '../errors.js';
import { localPlatform } from '../platform/index.js';
import { parseOverrides, readScenarioFile, selectVariants, stormLoadDriver, type LoadedScenario, type Scenario } from '../scenario/index.js';

export interface StepScenarioSpec {
  file: string;
  variant: string;
  repetitions: number | null;
  duration: string | null;
  set: readonly string[];
}

export interface StepScenario {
  loaded: LoadedScenario;
  /** Expectations dropped with the other variants (named in results.json). */
  dropped: string[];
  /** The `attestorm run` that runs the same (recorded in results.json). */
  command: string;
  kind: string;
}

/** The kinds a bisect can build for: the harness starts them from a binDir. */
const BUILDABLE = ['spire', 'reference'];

export function stepScenario(spec: StepScenarioSpec, binDir: string): StepScenario {
  const overrides = parseOverrides({ repetitions: spec.repetitions ?? undefined, duration: spec.duration ?? undefined });
  const own = `variants.${spec.variant}.agent`;
  const binSetting = `${own}.binDir=${JSON.stringify(binDir)}`;
  const l = readScenarioFile(spec.file, overrides, [...spec.set, binSetting], [`${own}.release`, `${own}.binDirEnv`]);
  const picked = selectVariants(l.scenario, [spec.variant]);
  const command = [
    'attestorm run',
    spec.file,
    `--variants ${spec.variant}`,
    ...[...spec.set, binSetting].map((s) => `--set '${s}'`),
    ...(spec.repetitions !== null ? [`--repetitions ${spec.repetitions}`] : []),
    ...(spec.duration !== null ? [`--duration ${spec.duration}`] : []),
  ].join(' ');
  const kind = picked.scenario.variants[0]!.agent.kind;
  return { loaded: { ...l, scenario: picked.scenario }, dropped: picked.dropped, command, kind };
}

/**
 * Every problem of the step's scenario before anything is built: the file, the variant, its kind,
 * that it has expectations to judge, and what the local platform says of it. Returns the kind and
 * the scenario a step runs (with the stand-in folder), for the machine's own checks.
 */
export function checkStepScenario(spec: StepScenarioSpec): { kind: string; scenario: Scenario } {
  // The variant as written first: a kind that takes no binDir is named as such, not as a bad key.
  const plain = readScenarioFile(spec.file, {}, spec.set);
  const variant = plain.scenario.variants.find((v) => v.name === spec.variant);
  if (!variant)
    throw new ConfigError(
      `--variant: "${spec.variant}" is not a variant of ${plain.scenario.name} (it has ${plain.scenario.variants.map((v) => v.name).join(', ')})`,
    );
  const kind = variant.agent.kind;
  if (!BUILDABLE.includes(kind))
    throw new ConfigError(
      `--variant ${spec.variant}: ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} agent is not started by the harness from a folder of binaries, so no build can be bisected; name a ${BUILDABLE.join(' or ')} variant`,
    );
  const s = stepScenario(spec, '/nonexistent/bisect-build');
  const problems: string[] = [];
  const rules = s.loaded.scenario.expect[spec.variant];
  if (!rules || Object.keys(rules).length === 0)
    problems.push(
      `--variant ${spec.variant}: ${s.loaded.scenario.name} has no expectations for it, so every step would pass; a step is judged by the variant's verdict: add some (e.g. --set expect.${spec.variant}.oomKilled=false)`,
    );
  stormLoadDriver.validate(s.loaded.scenario, localPlatform.loadSite);
  problems.push(...localPlatform.problems(s.loaded.scenario));
  if (problems.length) throw new ConfigError(problems);
  return { kind, scenario: s.loaded.scenario };
}
