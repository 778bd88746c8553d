// Every top-level command of the attestorm CLI, in the order `attestorm --help` lists them. main.ts
// registers exactly these; the command reference (docs/cli.md) is generated from the same list.
import type { CommandModule } from 'yargs';
import { agentCommand } from './cmd-agent.js';
import { bisectCommand } from './cmd-bisect.js';
import { bisectStepCommand } from './cmd-bisect-step.js';
import { cleanupCommand } from './cmd-cleanup.js';
import { clusterCommand } from './cmd-cluster.js';
import { commentCommand } from './cmd-comment.js';
import { debugCommand } from './cmd-debug.js';
import { exportCommand } from './cmd-export.js';
import { historyCommand } from './cmd-history.js';
import { initCommand } from './cmd-init.js';
import { kindCommand } from './cmd-kind.js';
import { loadCommand } from './cmd-load.js';
import { reportCommand } from './cmd-report.js';
import { runCommand } from './cmd-run.js';
import { stabilityCommand } from './cmd-stability.js';
import { sweepCommand } from './cmd-sweep.js';
import { validateCommand } from './cmd-validate.js';

// Each command has its own argument type; yargs' `command()` takes any of them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const COMMANDS: readonly CommandModule<any, any>[] = [
  runCommand,
  initCommand,
  validateCommand,
  agentCommand,
  loadCommand,
  reportCommand,
  exportCommand,
  commentCommand,
  historyCommand,
  debugCommand,
  cleanupCommand,
  stabilityCommand,
  sweepCommand,
  bisectCommand,
  bisectStepCommand,
  kindCommand,
  clusterCommand,
];

/** The word that invokes a command module ("run" for "run [scenario..]"). */
export function commandName(module: Pick<CommandModule, 'command'>): string {
  const spec = typeof module.command === 'string' ? module.command : module.command?.[0];
  return String(spec ?? '').split(' ')[0]!;
}
