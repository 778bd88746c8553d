// `npm run gen:cli-docs`: writes docs/cli.md from the CLI's command definitions.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../util/index.js';
import { COMMANDS } from './commands.js';
import { describeCommands, REFERENCE_FILE, renderReference } from './reference.js';

const file = join(PROJECT_ROOT, REFERENCE_FILE);
writeFileSync(file, renderReference(describeCommands(COMMANDS)));
process.stdout.write(`wrote ${REFERENCE_FILE}\n`);
