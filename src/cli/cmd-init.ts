// `attestorm init [dir]`: a commented starter scenario in the user's folder, its $schema line
// pointing at this installation's schema. An existing file is never replaced without --force.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { ConfigError } from '../errors.js';
import { schemaRefFrom, starterScenario, STARTER_FILE } from '../scenario/index.js';

interface InitArgs {
  dir: string;
  force: boolean;
}

export const initCommand: CommandModule<object, InitArgs> = {
  command: 'init [dir]',
  describe: `Write a commented starter scenario (${STARTER_FILE}) into a folder, for attestorm validate and attestorm run`,
  builder: (y: Argv<object>) =>
    y
      .positional('dir', { type: 'string', default: '.', describe: 'Folder to write it into (created when missing)' })
      .option('force', { type: 'boolean', default: false, describe: `Replace an existing ${STARTER_FILE}` })
      .example('$0 init', `Write ./${STARTER_FILE}`)
      .example('$0 init storms --force', `Write storms/${STARTER_FILE}, replacing the one there`)
      .strict() as unknown as Argv<InitArgs>,
  handler: (args) => {
    const file = join(args.dir, STARTER_FILE);
    mkdirSync(args.dir, { recursive: true });
    try {
      // 'wx' fails on an existing file, whoever created it in the meantime.
      writeFileSync(file, starterScenario(schemaRefFrom(args.dir)), { flag: args.force ? 'w' : 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new ConfigError(`${file} already exists: pass --force to replace it, or name another folder`);
      throw new ConfigError(`${file}: cannot write the starter scenario (${(err as Error).message})`);
    }
    process.stdout.write(`wrote ${file}\n  check it: attestorm validate ${file}\n  run it:   sudo attestorm run ${file}\n`);
  },
};
