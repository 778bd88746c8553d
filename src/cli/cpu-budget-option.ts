// `--cpu-budget <cores>` of `run` and `stability`: the whole run (runner, agent, pods, workers) under
// one CPU quota, as on a smaller or busier machine. Declared once for both commands.
import { applyCpuBudget, checkCpuBudget, type CpuBudget } from '../cgroup/index.js';
import { onCleanup } from '../util/index.js';

export const cpuBudgetOption = {
  type: 'number',
  describe:
    'Run everything (runner, agent, pods, workers) under a CPU quota of this many cores, e.g. 1.2: a smaller or busier machine on demand (needs a writable cpu cgroup). Default: no quota',
} as const;

/** Validates the flag (ConfigError naming it); undefined when not given. */
export function checkCpuBudgetFlag(cores: number | undefined): number | undefined {
  return cores === undefined ? undefined : checkCpuBudget(cores);
}

/** Applies the budget (PlatformError when the machine cannot) and registers its release on exit or SIGINT. */
export function startCpuBudget(cores: number | undefined): CpuBudget | null {
  if (cores === undefined) return null;
  const budget = applyCpuBudget(cores);
  // Cleanups run newest first: this one, registered before any run's, runs after their cgroups are gone.
  onCleanup(() => budget.release());
  return budget;
}
