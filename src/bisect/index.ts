// Bisecting an agent's history for the commit that brings an OOM back: each commit built (SPIRE's Go
// build, or the user's command), stormed by a scenario's variant and judged by its verdict, git's
// bisection choosing the next; and one step alone for `git bisect run`.
export { runBisect } from './bisect.js';
export type { BisectOptions, BisectResult } from './bisect.js';
export { bisectStep, BISECT_EXIT } from './bisect-step.js';
export type { BisectStepOptions, BisectStepResult } from './bisect-step.js';
export { readState, writeState, settingsDifferences, STATE_FILE, BISECT_SCHEMA_VERSION } from './bisect-state.js';
export type { BisectSettings, BisectState, BisectStep, BisectOutcome } from './bisect-state.js';
export { renderBisectHtml, renderBisectMarkdown, writeBisectReports } from './bisect-report.js';
export { outcomeSentence } from './outcome.js';
export { judgeStep } from './classify.js';
export type { StepJudgement, StepFigures } from './classify.js';
export { parseBisectOutput, GitBisect } from './git-bisect.js';
export type { BisectNext, Mark } from './git-bisect.js';
export { addWorktree, checkRepository, isAncestor, removeWorktree, resolveCommit, sharedClone } from './git.js';
export { nearestServed, refusedModules, parseVersionsLine, replaceArgument } from './go-modules.js';
export { spireBuilder, spireGoEnv, SPIRE_COMMANDS } from './build-spire.js';
export { commandBuilder } from './build-command.js';
export type { Builder, BuildOutcome } from './builder.js';
export { checkStepScenario, stepScenario } from './step-scenario.js';
export type { StepScenarioSpec } from './step-scenario.js';
export { timeLeft } from './progress-lines.js';
export { builderFor, checkBeforeBuilding, defaultBisectDir, resolveBisectSettings, specOf, stepSettings } from './bisect-settings.js';
export type { BisectAsk, StepAsk } from './bisect-settings.js';
