// The attestorm command line: one module per command (cmd-*.ts), registered here. `attestorm agent`
// has an entry of its own (agent-main.ts) so the agent's process loads nothing but the agent.
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ConfigError, EXIT } from '../errors.js';
import { reportFatal } from './report-fatal.js';
import { agentCommand } from './cmd-agent.js';
import { debugCommand } from './cmd-debug.js';
import { loadCommand } from './cmd-load.js';
import { cleanupCommand } from './cmd-cleanup.js';
import { runCommand } from './cmd-run.js';
import { reportCommand } from './cmd-report.js';
import { stabilityCommand } from './cmd-stability.js';
import { sweepCommand } from './cmd-sweep.js';
import { historyCommand } from './cmd-history.js';
import { kindCommand } from './cmd-kind.js';
import { clusterCommand } from './cmd-cluster.js';

try {
  await yargs(hideBin(process.argv))
    .scriptName('attestorm')
    .usage('$0 <command> [options]\n\nReproduce Workload API agent OOMs under attestation storms and compare rate-limiter placements.')
    .command(runCommand)
    .command(agentCommand)
    .command(loadCommand)
    .command(reportCommand)
    .command(historyCommand)
    .command(debugCommand)
    .command(cleanupCommand)
    .command(stabilityCommand)
    .command(sweepCommand)
    .command(kindCommand)
    .command(clusterCommand)
    .demandCommand(1, 'Name a command: run, sweep, agent, load, report, debug, cleanup, stability, kind or cluster.')
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
