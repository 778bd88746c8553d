// The load options as command-line flags, declared once: `attestorm load` takes them, and a
// generator pod in a cluster is started with them (the renderer formats the resolved options into
// flags, the pod parses them back), so a flag's name, help, parsing and formatting cannot drift.
import type { Options } from 'yargs';
import { ConfigError } from '../errors.js';
import { formatDuration, parseDurationMs } from '../util/index.js';
import { LOAD_DEFAULTS, LOAD_DESCRIPTIONS, parseMethodMix, validateLoadOptions, type LoadOptions } from './options.js';
import { CONNECTION_MODES, LOAD_CLIENTS, LOAD_METHODS, RETRY_POLICIES } from './vocabulary.js';

type FlagKey = Exclude<keyof LoadOptions, 'bystanders'>;

export interface LoadFlagOf<K extends FlagKey> {
  flag: string;
  key: K;
  /** yargs' declaration: type, choices, default and help. */
  option: Options;
  /** The flag's value as yargs gives it → the option's; throws ConfigError naming the flag. Absent: taken as given. */
  parse?: (raw: unknown, flag: string) => LoadOptions[K];
  /** The option's value → the flag's values, each given after its own --flag; parse(format(v)) equals v. */
  format: (value: NonNullable<LoadOptions[K]>) => string[];
}

/** Any one load option's flag. */
export type LoadFlag = { [K in FlagKey]: LoadFlagOf<K> }[FlagKey];

function duration(value: unknown, flag: string): number {
  const ms = parseDurationMs(String(value));
  if (ms === null) throw new ConfigError(`--${flag} must be a duration like 500ms, 30s or 2m, got ${JSON.stringify(value)}`);
  return ms;
}

function number(value: unknown, flag: string): number {
  const n = Number(value);
  if (typeof value === 'boolean' || value === '' || !Number.isFinite(n)) throw new ConfigError(`--${flag} must be a number, got ${JSON.stringify(value)}`);
  return n;
}

const D = LOAD_DEFAULTS;
// Weight 1 is written bare in help defaults; flags formatted for a pod always carry the weight.
const mixHelp = (m: Partial<Record<string, number>>) => Object.entries(m).map(([k, w]) => (w === 1 ? k : `${k}=${w}`));
const text = (v: string) => [v];
const count = (v: number) => [String(v)];
// Whole milliseconds: formatDuration rounds (1234 ms is "1.2s"), a flag must not.
const ms = (v: number) => [`${v}ms`];

/** Every load option that has a flag (bystanders are a nested block: a scenario's). */
export const LOAD_FLAGS: { [K in FlagKey]-?: LoadFlagOf<K> } = {
  socket: {
    flag: 'socket',
    key: 'socket',
    format: text,
    option: { type: 'string', describe: 'Unix socket of the Workload API server (reference agent or a real SPIRE agent)' },
  },
  pods: { flag: 'pods', key: 'pods', parse: number, format: count, option: { type: 'string', default: String(D.pods), describe: LOAD_DESCRIPTIONS.pods } },
  workersPerPod: {
    flag: 'workers',
    key: 'workersPerPod',
    parse: number,
    format: count,
    option: { type: 'string', default: String(D.workersPerPod), describe: LOAD_DESCRIPTIONS.workersPerPod },
  },
  connection: {
    flag: 'connection',
    key: 'connection',
    format: text,
    option: { type: 'string', choices: CONNECTION_MODES, default: D.connection, describe: LOAD_DESCRIPTIONS.connection },
  },
  client: {
    flag: 'client',
    key: 'client',
    format: text,
    option: { type: 'string', choices: LOAD_CLIENTS, default: D.client, describe: LOAD_DESCRIPTIONS.client },
  },
  rate: { flag: 'rate', key: 'rate', parse: number, format: count, option: { type: 'string', describe: `${LOAD_DESCRIPTIONS.rate} [default: closed loop]` } },
  deadlineMs: {
    flag: 'deadline',
    key: 'deadlineMs',
    parse: duration,
    format: ms,
    option: { type: 'string', default: formatDuration(D.deadlineMs), describe: LOAD_DESCRIPTIONS.deadline },
  },
  retry: {
    flag: 'retry',
    key: 'retry',
    format: text,
    option: { type: 'string', choices: RETRY_POLICIES, default: D.retry, describe: LOAD_DESCRIPTIONS.retry },
  },
  methods: {
    flag: 'method',
    key: 'methods',
    parse: (v, flag) => parseMethodMix(([] as unknown[]).concat(v).map(String), `--${flag}`),
    format: (m) => Object.entries(m).map(([k, w]) => `${k}=${w}`),
    option: {
      type: 'string',
      array: true,
      default: mixHelp(D.methods),
      describe: `Method[=weight] to call, repeatable (${LOAD_METHODS.join(', ')}): ${LOAD_DESCRIPTIONS.methods}`,
    },
  },
  audience: { flag: 'audience', key: 'audience', format: text, option: { type: 'string', default: D.audience, describe: LOAD_DESCRIPTIONS.audience } },
  durationMs: {
    flag: 'duration',
    key: 'durationMs',
    parse: duration,
    format: ms,
    option: { type: 'string', default: formatDuration(D.durationMs), describe: "Load phase length; the run stops by itself (a scenario's top-level duration)" },
  },
  maxCalls: {
    flag: 'max-calls',
    key: 'maxCalls',
    parse: number,
    format: count,
    option: { type: 'string', describe: 'Stop after this many calls in total [default: no bound]' },
  },
};

/** What one generator pod is started with: its workers and how they call; the runner releases and ends it. */
export const GENERATOR_LOAD_KEYS = ['socket', 'workersPerPod', 'connection', 'client', 'deadlineMs', 'retry', 'audience', 'methods', 'rate'] as const;
export type GeneratorLoad = Pick<LoadOptions, (typeof GENERATOR_LOAD_KEYS)[number]>;
export const GENERATOR_FLAGS: readonly LoadFlag[] = GENERATOR_LOAD_KEYS.map((k) => LOAD_FLAGS[k]);

/** Options → the flags that set them, in the order of `flags`; an option left out gets no flag (its default applies). */
export function formatLoadFlags(flags: readonly LoadFlag[], options: Partial<LoadOptions>): string[] {
  const out: string[] = [];
  for (const f of flags) {
    const value = options[f.key];
    if (value === undefined) continue;
    for (const v of (f.format as (x: unknown) => string[])(value)) out.push(`--${f.flag}`, v);
  }
  return out;
}

/** Parsed flags (as yargs gives them, keyed by flag name) → the options they set; each bad value a problem naming its flag. */
export function parseLoadFlags(flags: readonly LoadFlag[], argv: Record<string, unknown>): { options: Partial<LoadOptions>; problems: string[] } {
  const options: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const f of flags) {
    const raw = argv[f.flag];
    if (raw === undefined) continue;
    try {
      options[f.key] = f.parse ? f.parse(raw, f.flag) : raw;
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
    }
  }
  return { options: options as Partial<LoadOptions>, problems };
}

const FLAG_OF_KEY = new Map<string, string>(Object.values(LOAD_FLAGS).map((f) => [f.key, f.flag]));

/** A load-option problem as validateLoadOptions words it ("deadlineMs: must be …") → in flag terms ("--deadline must be …"). */
export function problemAsFlag(problem: string): string {
  const key = /^([A-Za-z]+)/.exec(problem)?.[1] ?? '';
  const flag = FLAG_OF_KEY.get(key);
  if (!flag) return problem;
  const rest = problem
    .slice(key.length)
    .replace(/^[:.]\s*/, '')
    .replace(/^[A-Za-z]+:\s*/, '');
  return `--${flag} ${rest}`;
}

/** `attestorm kind generator`'s load flags → the generator's load options; a ConfigError names each bad flag. */
export function generatorLoadFromFlags(argv: Record<string, unknown>): GeneratorLoad {
  const { options, problems } = parseLoadFlags(GENERATOR_FLAGS, argv);
  if (argv.socket === undefined) problems.push('--socket is required: the Workload API socket the workers call');
  if (problems.length) throw new ConfigError(problems);
  try {
    // pods and durationMs only complete the options for validation: a pod runs one, the runner ends it.
    validateLoadOptions({ ...options, pods: 1, durationMs: 100 }, '');
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(err.problems.map(problemAsFlag));
  }
  return options as GeneratorLoad;
}
