// What a bisect was asked, checked before anything is built: the refs resolved in the user's
// checkout, the range's direction, the scenario's variant and its kind against the build, the
// build's own needs (Go), and the machine's (cgroups). Every problem at once.
import { join, resolve } from 'node:path';
import { ConfigError, PreflightError } from '../errors.js';
import { localPlatform } from '../platform/index.js';
import { readScenarioFile } from '../scenario/index.js';
import type { BisectSettings } from './bisect-state.js';
import { commandBuilder } from './build-command.js';
import { spireBuilder } from './build-spire.js';
import type { Builder } from './builder.js';
import { checkRepository, isAncestor, resolveCommit } from './git.js';
import { replaceArgument } from './go-modules.js';
import { checkStepScenario, type StepScenarioSpec } from './step-scenario.js';

/** The flags of one step, as given (bisect and bisect-step share them). */
export interface StepAsk {
  scenario?: string | undefined;
  variant?: string | undefined;
  repetitions?: number | undefined;
  duration?: string | undefined;
  set?: string[] | undefined;
  build?: string | undefined;
  replace?: string[] | undefined;
  goCache?: string | undefined;
}

export interface BisectAsk extends StepAsk {
  source?: string | undefined;
  good?: string | undefined;
  bad?: string | undefined;
  keepBuilds?: boolean | undefined;
}

/** The variant named, or the scenario's only one. */
function variantOf(file: string, asked: string | undefined): string {
  if (asked !== undefined) return asked;
  const names = readScenarioFile(file).scenario.variants.map((v) => v.name);
  if (names.length === 1) return names[0]!;
  throw new ConfigError(`--variant is required: ${file} has ${names.length} variants (${names.join(', ')}); a bisect judges one`);
}

/** The step's scenario and its build as asked; problems collected into `problems`. */
export function stepSettings(a: StepAsk, problems: string[]): { spec: StepScenarioSpec; build: BisectSettings['build'] } | null {
  if (!a.scenario) problems.push('a scenario file is required: attestorm bisect <scenario> …');
  if (a.repetitions !== undefined && !(Number.isInteger(a.repetitions) && a.repetitions > 0))
    problems.push(`--repetitions must be a positive integer, got ${a.repetitions}`);
  const replace: string[] = [];
  for (const r of a.replace ?? []) {
    const arg = replaceArgument(r, (p) => resolve(p));
    if (arg) replace.push(arg);
    else
      problems.push(
        `--replace must be <module>[@<version>]=<folder or module@version>, e.g. github.com/spiffe/spire-plugin-sdk=/opt/spire-src/plugin-sdk, got ${JSON.stringify(r)}`,
      );
  }
  if (a.build !== undefined && (a.replace?.length || a.goCache !== undefined))
    problems.push('--replace and --go-cache are for the SPIRE build; with --build, the command builds as it likes');
  if (a.build !== undefined && !a.build.trim()) problems.push('--build must be a command, got an empty one');
  if (!a.scenario) return null;
  let variant: string;
  try {
    variant = variantOf(a.scenario, a.variant);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
    return null;
  }
  return {
    spec: { file: resolve(a.scenario), variant, repetitions: a.repetitions ?? null, duration: a.duration ?? null, set: a.set ?? [] },
    build:
      a.build !== undefined ? { kind: 'command', command: a.build } : { kind: 'spire', replace, goCache: a.goCache === undefined ? null : resolve(a.goCache) },
  };
}

export async function resolveBisectSettings(a: BisectAsk): Promise<BisectSettings> {
  const problems: string[] = [];
  const step = stepSettings(a, problems);
  for (const [flag, v] of [
    ['--source', a.source],
    ['--good', a.good],
    ['--bad', a.bad],
  ] as const)
    if (!v) problems.push(`${flag} is required`);
  if (problems.length || !step || !a.source || !a.good || !a.bad) throw new ConfigError(problems);
  const source = resolve(a.source);
  await checkRepository(source, '--source');
  const found = await Promise.allSettled([resolveCommit(source, a.good, '--good'), resolveCommit(source, a.bad, '--bad')]);
  for (const f of found) if (f.status === 'rejected') problems.push(...(f.reason instanceof ConfigError ? f.reason.problems : [String(f.reason)]));
  if (problems.length) throw new ConfigError(problems);
  const [good, bad] = found.map((f) => (f as PromiseFulfilledResult<string>).value) as [string, string];
  if (good === bad) throw new ConfigError(`--good ${a.good} and --bad ${a.bad} are the same commit ${good.slice(0, 9)}: there is nothing between them`);
  if (await isAncestor(source, bad, good))
    throw new ConfigError(`--bad ${a.bad} is older than --good ${a.good} (an ancestor of it): the first bad commit is searched after a good one; swap them`);
  return {
    scenario: step.spec.file,
    variant: step.spec.variant,
    source,
    good: { ref: a.good, commit: good },
    bad: { ref: a.bad, commit: bad },
    repetitions: step.spec.repetitions,
    duration: step.spec.duration,
    set: [...step.spec.set],
    build: step.build,
    keepBuilds: a.keepBuilds === true,
  };
}

export function builderFor(b: BisectSettings['build']): Builder {
  return b.kind === 'command' ? commandBuilder(b.command) : spireBuilder({ replace: b.replace, goCache: b.goCache });
}

export const specOf = (s: BisectSettings): StepScenarioSpec => ({
  file: s.scenario,
  variant: s.variant,
  repetitions: s.repetitions,
  duration: s.duration,
  set: s.set,
});

/**
 * Everything a first step would find wrong, before it is built: the scenario and variant, a
 * reference variant without --build, the builder's tools, and cgroups on this machine.
 */
export async function checkBeforeBuilding(spec: StepScenarioSpec, builder: Builder | null): Promise<void> {
  const { kind, scenario } = checkStepScenario(spec);
  const problems: string[] = [];
  if (builder?.kind === 'spire' && kind !== 'spire')
    problems.push(
      `--variant ${spec.variant} is a ${kind} agent: the default build makes spire-server and spire-agent; give --build '<command>' that fills $ATTESTORM_BIN_DIR with what a ${kind} agent's binDir holds`,
    );
  if (builder) problems.push(...(await builder.problems()));
  if (problems.length) throw new ConfigError(problems);
  // What every run needs of this machine (sockets, loopback, the kubelet emulator), as `run` checks it.
  const failures = await localPlatform.checkMachine(scenario);
  if (failures.length) throw new PreflightError(failures);
}

/** reports/bisect-<scenario>-<variant>-<good>-<bad>: the same command finds the same folder, and resumes there. */
export function defaultBisectDir(s: BisectSettings): string {
  const name = readScenarioFile(s.scenario).scenario.name;
  return join('reports', `bisect-${name}-${s.variant}-${s.good.commit.slice(0, 9)}-${s.bad.commit.slice(0, 9)}`.replace(/[^A-Za-z0-9._-]/g, '_'));
}
