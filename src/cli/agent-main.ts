// `attestorm agent` alone: the reference agent's command without the rest of the CLI (reports,
// canvas, the runner), so an agent started by hand has the footprint of the one the runner starts.
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ConfigError, EXIT } from '../errors.js';
import { agentCommand } from './cmd-agent.js';
import { reportFatal } from './report-fatal.js';

try {
  await yargs(hideBin(process.argv))
    .scriptName('attestorm')
    .command(agentCommand)
    .demandCommand(1)
    .strict()
    .wrap(Math.min(110, process.stdout.columns ?? 100))
    .fail((msg, err) => {
      if (err) throw err;
      throw new ConfigError(msg);
    })
    .help()
    .version(false)
    .parseAsync();
} catch (err) {
  process.exitCode = reportFatal(err);
}
if (process.exitCode === undefined) process.exitCode = EXIT.OK;
