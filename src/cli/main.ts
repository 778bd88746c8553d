// The attestorm command line: one module per command (cmd-*.ts), registered here.
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { AttestormError, ConfigError, EXIT, exitCodeFor } from '../errors.js';
import { agentCommand } from './cmd-agent.js';
import { debugCommand } from './cmd-debug.js';
import { loadCommand } from './cmd-load.js';
import { cleanupCommand } from './cmd-cleanup.js';
import { runCommand } from './cmd-run.js';
import { reportCommand } from './cmd-report.js';
import { kindCommand } from './cmd-kind.js';

export function reportFatal(err: unknown): number {
  if (err instanceof ConfigError) {
    process.stderr.write(`attestorm: ${err.message}\n`);
  } else if (err instanceof AttestormError) {
    process.stderr.write(`attestorm: ${err.message} [${err.code}]\n`);
  } else {
    process.stderr.write(`attestorm: unexpected error: ${(err as Error)?.stack ?? String(err)}\n`);
  }
  return exitCodeFor(err);
}

try {
  await yargs(hideBin(process.argv))
    .scriptName('attestorm')
    .usage('$0 <command> [options]\n\nReproduce Workload API agent OOMs under attestation storms and compare rate-limiter placements.')
    .command(runCommand)
    .command(agentCommand)
    .command(loadCommand)
    .command(reportCommand)
    .command(debugCommand)
    .command(cleanupCommand)
    .command(kindCommand)
    .demandCommand(1, 'Name a command: run, agent, load, report, debug or cleanup.')
    .strict()
    .wrap(Math.min(110, process.stdout.columns ?? 100))
    .fail((msg, err) => {
      if (err) throw err;
      throw new ConfigError(msg);
    })
    .help()
    .version()
    .parseAsync();
} catch (err) {
  process.exitCode = reportFatal(err);
}
if (process.exitCode === undefined) process.exitCode = EXIT.OK;
