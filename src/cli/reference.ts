// The command reference (docs/cli.md), read from the command modules themselves: each builder runs
// against a real yargs instance whose option, positional, command, example and epilog calls are
// recorded on the way through, so the reference lists exactly what `--help` does.
import { tmpdir } from 'node:os';
import { runtimeBase } from '../sandbox/index.js';
import { join } from 'node:path';
import yargs, { type Argv, type CommandModule, type Options, type PositionalOptions } from 'yargs';

export interface FlagDoc {
  name: string;
  aliases: string[];
  type: string;
  choices: string[];
  default: string | null;
  required: boolean;
  describe: string;
}

export interface CommandDoc {
  /** Words after `attestorm`: ["kind", "render"]. */
  path: string[];
  /** The declaration as written: "render <scenario>". */
  spec: string;
  describe: string;
  positionals: FlagDoc[];
  flags: FlagDoc[];
  examples: Array<{ command: string; describe: string }>;
  epilog: string | null;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyCommand = CommandModule<any, any>;

/** Every command and subcommand of `modules`, depth first, in declaration order. */
export function describeCommands(modules: readonly AnyCommand[], parent: string[] = []): CommandDoc[] {
  const out: CommandDoc[] = [];
  for (const m of modules) {
    const spec = String((Array.isArray(m.command) ? m.command[0] : m.command) ?? '');
    const doc: CommandDoc = {
      path: [...parent, spec.split(' ')[0]!],
      spec,
      describe: typeof m.describe === 'string' ? m.describe : '',
      positionals: [],
      flags: [],
      examples: [],
      epilog: null,
    };
    const children: AnyCommand[] = [];
    if (typeof m.builder === 'function') {
      m.builder(recorder(doc, children));
    } else if (m.builder) {
      for (const [name, opt] of Object.entries(m.builder)) doc.flags.push(flagDoc(name, opt as Options));
    }
    out.push(doc, ...describeCommands(children, doc.path));
  }
  return out;
}

/** A real yargs instance that notes what a builder declares. */
function recorder(doc: CommandDoc, children: AnyCommand[]): Argv {
  const real = yargs([]);
  const proxy: Argv = new Proxy(real, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        note(String(prop), args);
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        return result === target ? proxy : result;
      };
    },
  });
  const note = (method: string, args: unknown[]) => {
    if (method === 'option' || method === 'options') {
      if (typeof args[0] === 'string') doc.flags.push(flagDoc(args[0], (args[1] ?? {}) as Options));
      else for (const [name, opt] of Object.entries(args[0] as Record<string, Options>)) doc.flags.push(flagDoc(name, opt));
    } else if (method === 'positional') {
      doc.positionals.push(flagDoc(args[0] as string, (args[1] ?? {}) as PositionalOptions));
    } else if (method === 'command') {
      if (typeof args[0] === 'string')
        children.push({ command: args[0], describe: args[1] as string, builder: args[2] as AnyCommand['builder'], handler: () => {} });
      else children.push(...([] as AnyCommand[]).concat(args[0] as AnyCommand | AnyCommand[]));
    } else if (method === 'example') {
      const list: Array<[string, string?]> = Array.isArray(args[0])
        ? (args[0] as Array<[string, string?]>)
        : [[args[0] as string, args[1] as string | undefined]];
      for (const [command, describe] of list) doc.examples.push({ command: command.replace(/\$0/g, 'attestorm'), describe: describe ?? '' });
    } else if (method === 'epilog' || method === 'epilogue') {
      doc.epilog = args[0] as string;
    }
  };
  return proxy;
}

function flagDoc(name: string, opt: Options | PositionalOptions): FlagDoc {
  const o = opt as Options;
  const alias = o.alias === undefined ? [] : ([] as string[]).concat(o.alias as string | string[]);
  const type = `${o.type ?? (o.boolean ? 'boolean' : o.number ? 'number' : o.string ? 'string' : o.count ? 'count' : '')}${o.array ? ' (repeatable)' : ''}`;
  return {
    name,
    aliases: alias,
    type,
    choices: o.choices === undefined ? [] : ([] as unknown[]).concat(o.choices).map(String),
    default: o.default === undefined ? null : typeof o.default === 'string' ? o.default : JSON.stringify(o.default),
    required: Boolean(o.demandOption),
    describe: String(o.describe ?? o.description ?? o.desc ?? ''),
  };
}

// Text that depends on where and when the help is printed (the temp folder, a default holding the
// current time) is written as a placeholder, so the reference is the same on every machine.
function stable(text: string): string {
  return text
    .split(runtimeBase())
    .join('<runtime dir>')
    .split(join(tmpdir(), 'attestorm'))
    .join('$TMPDIR/attestorm')
    .replace(/\d{8}T\d{6}Z/g, '<time>');
}

/** A Markdown table cell: pipes escaped, angle brackets kept visible outside code spans. */
function cell(text: string): string {
  return stable(text)
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 ? part : part.replace(/</g, '&lt;').replace(/>/g, '&gt;')))
    .join('')
    .replace(/\|/g, '\\|')
    .replace(/\n+/g, ' ');
}

function row(f: FlagDoc, prefix: string): string {
  const names = [f.name, ...f.aliases].map((n) => `\`${prefix}${n}\``).join(', ');
  const type = [f.type, f.choices.length ? `one of ${f.choices.map((c) => `\`${c}\``).join(', ')}` : ''].filter(Boolean).join('; ');
  const dflt = f.default === null ? (f.required ? 'required' : '') : `\`${stable(f.default)}\``;
  return `| ${names} | ${type} | ${dflt} | ${cell(f.describe)} |`;
}

export const REFERENCE_FILE = 'docs/cli.md';

/** docs/cli.md: one section per command, its arguments, flags, examples and notes. */
export function renderReference(docs: readonly CommandDoc[]): string {
  const title = (d: CommandDoc) => `attestorm ${d.path.join(' ')}`;
  const anchor = (d: CommandDoc) => title(d).replace(/ /g, '-');
  const lines = [
    '# Command reference',
    '',
    'For anyone calling attestorm from a shell, a script or a CI job: every command, argument and flag,',
    'with its type and default. `attestorm <command> --help` prints the same. This file is generated from the',
    "CLI's own definitions (`npm run gen:cli-docs`); a unit test fails when a command or flag is missing here",
    'or the file is out of date. Every command also takes `--help`; `attestorm --version` prints the version.',
    'Exit statuses are described in [verdicts and expectations](verdicts-and-expectations.md#exit-status).',
    '',
    ...docs.map((d) => `${'  '.repeat(d.path.length - 1)}- [\`${title(d)}\`](#${anchor(d)}) — ${cell(d.describe)}`),
  ];
  for (const d of docs) {
    const usage = `attestorm ${[...d.path.slice(0, -1), d.spec].join(' ')}`;
    lines.push('', `## ${title(d)}`, '', '```', usage, '```', '', cell(d.describe));
    if (d.positionals.length) {
      lines.push('', '| argument | type | default | description |', '|---|---|---|---|', ...d.positionals.map((p) => row(p, '')));
    }
    if (d.flags.length) {
      lines.push('', '| flag | type | default | description |', '|---|---|---|---|', ...d.flags.map((f) => row(f, '--')));
    }
    if (d.examples.length) {
      lines.push('', 'Examples:', '', '```sh', ...d.examples.map((e) => `${e.command}${e.describe ? `   # ${stable(e.describe)}` : ''}`), '```');
    }
    if (d.epilog) lines.push('', '```', stable(d.epilog), '```');
  }
  return `${lines.join('\n')}\n`;
}

/**
 * What a reference text lacks: a section per command, and a row per flag and argument in that
 * command's section. Empty when every command and flag is documented.
 */
export function missingFromReference(text: string, docs: readonly CommandDoc[]): string[] {
  const sections = new Map<string, string>();
  const parts = text.split(/^## /m).slice(1);
  for (const part of parts) sections.set(part.slice(0, part.indexOf('\n')).trim(), part);
  const missing: string[] = [];
  for (const d of docs) {
    const name = `attestorm ${d.path.join(' ')}`;
    const section = sections.get(name);
    if (section === undefined) {
      missing.push(`${name}: no section "## ${name}"`);
      continue;
    }
    for (const p of d.positionals) if (!section.includes(`| \`${p.name}\``)) missing.push(`${name}: argument ${p.name} has no row`);
    for (const f of d.flags) if (!section.includes(`| \`--${f.name}\``)) missing.push(`${name}: flag --${f.name} has no row`);
  }
  return missing;
}
