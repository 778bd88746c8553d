// The attestorm command line: one module per command (cmd-*.ts), registered here. `attestorm agent`
// has an entry of its own (agent-main.ts) so the agent's process loads nothing but the agent.
import yargs, { type CommandModule } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ConfigError, EXIT } from '../errors.js';
import { reportFatal } from './report-fatal.js';
import { COMMANDS, commandName } from './commands.js';
import { reRunInDelegatedScope } from './delegated-scope.js';
import { handBackCache } from './hand-back-cache.js';

const reRun = await reRunInDelegatedScope();
if (reRun !== null) process.exitCode = reRun;
else
  try {
    await yargs(hideBin(process.argv))
      .scriptName('attestorm')
      .usage('$0 <command> [options]\n\nReproduce Workload API agent OOMs under attestation storms and compare rate-limiter placements.')
      .command(COMMANDS as CommandModule[])
      .demandCommand(1, `Name a command: ${COMMANDS.map(commandName).join(', ')}.`)
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
handBackCache();
if (process.exitCode === undefined) process.exitCode = EXIT.OK;
