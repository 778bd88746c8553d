// The command reference (docs/cli.md) and the CLI agree: every command, argument and flag the
// command modules declare has its entry, and the file is what `npm run gen:cli-docs` writes today.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { describe, expect, it } from 'vitest';
import { COMMANDS, commandName } from '../../src/cli/commands.js';
import { describeCommands, missingFromReference, REFERENCE_FILE, renderReference } from '../../src/cli/reference.js';
import { runCommand } from '../../src/cli/cmd-run.js';
import { PROJECT_ROOT } from '../../src/util/index.js';

const reference = readFileSync(join(PROJECT_ROOT, REFERENCE_FILE), 'utf8');
const docs = describeCommands(COMMANDS);

describe('docs/cli.md against the CLI definitions', () => {
  it('reads every command, subcommand and flag from the modules', () => {
    const names = docs.map((d) => d.path.join(' '));
    expect(names).toEqual(
      expect.arrayContaining([
        'run',
        'agent',
        'load',
        'report',
        'history',
        'debug cgroup',
        'cleanup',
        'stability',
        'sweep',
        'kind render',
        'kind up',
        'cluster up',
        'cluster down',
      ]),
    );
    const run = docs.find((d) => d.path.join(' ') === 'run')!;
    expect(run.positionals.map((p) => p.name)).toEqual(['scenario']);
    expect(run.flags.map((f) => f.name)).toEqual(expect.arrayContaining(['out', 'variants', 'baseline', 'tolerance', 'junit', 'cpu-budget', 'agent-cpus']));
    // The agent's flags come from its FLAGS table, the load's from src/load/options.ts.
    expect(docs.find((d) => d.path.join(' ') === 'agent')!.flags.map((f) => f.name)).toEqual(expect.arrayContaining(['socket', 'placement', 'limit', 'key']));
    expect(docs.find((d) => d.path.join(' ') === 'load')!.flags.map((f) => f.name)).toEqual(
      expect.arrayContaining(['pods', 'workers', 'connection', 'deadline']),
    );
  });

  it('has a section for every command and a row for every argument and flag', () => {
    expect(missingFromReference(reference, docs)).toEqual([]);
  });

  it('is up to date (regenerate with npm run gen:cli-docs)', () => {
    expect(reference, `${REFERENCE_FILE} differs from the CLI definitions: run npm run gen:cli-docs`).toBe(renderReference(docs));
  });

  it('names a command or flag that is added without docs', () => {
    const added: CommandModule = {
      command: 'frobnicate <thing>',
      describe: 'not documented',
      builder: (y: Argv) => y.positional('thing', { type: 'string' }).option('zap', { type: 'boolean' }),
      handler: () => {},
    };
    const runWithFlag = {
      ...runCommand,
      builder: (y: Argv) => (runCommand.builder as (y: Argv) => Argv)(y).option('new-flag', { type: 'string' }),
    } as unknown as CommandModule;
    const withExtra = describeCommands([...COMMANDS.filter((c) => c !== runCommand), runWithFlag, added]);
    expect(missingFromReference(reference, withExtra)).toEqual([
      'attestorm run: flag --new-flag has no row',
      'attestorm frobnicate: no section "## attestorm frobnicate"',
    ]);
    expect(renderReference(withExtra)).not.toBe(reference);
  });

  it('lists what attestorm --help lists, and the README names every command', () => {
    const help = spawnSync(process.execPath, [join(PROJECT_ROOT, 'bin/attestorm.js'), '--help'], { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(help.status).toBe(0);
    const listed = [...help.stdout.matchAll(/^ {2}attestorm ([a-z-]+)/gm)].map((m) => m[1]);
    expect(listed).toEqual(COMMANDS.map(commandName));
    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    for (const name of listed) expect(readme, `README.md does not mention attestorm ${name}`).toContain(`attestorm ${name}`);
  });
});
