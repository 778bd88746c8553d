// `attestorm agent`: runs the reference Workload API agent. Flags are declared once, in FLAGS,
// each naming the config key it sets; a YAML file (--config) is overlaid by the flags and the
// result validated by the agent's schema. Contract for other tools: one JSON line on stdout when
// ready — {"event":"ready","pid":…,"socket":"…","metrics":"http://…/metrics"|null} — logs on stderr,
// SIGTERM/SIGINT (or the owner's IPC channel closing) drain gracefully, remove the socket and exit 0,
// exactly as the runner's agent entry does (src/agent/until-stopped.ts).
import type { Argv, CommandModule, Options } from 'yargs';
import {
  agentConfigSchema,
  ATTESTORS,
  LIMIT_KEYS,
  parseAgentConfig,
  readAgentConfigFile,
  readyLine,
  startAgent,
  STOP_GRACE_MS,
  untilStopped,
  type AgentConfig,
  type RunningAgent,
} from '../agent/index.js';
import { KEY_STRATEGIES, PLACEMENTS } from '../contract/index.js';
import { ConfigError, EXIT } from '../errors.js';

/** Dotted paths of the config's leaves and sub-objects: the only keys a flag may name. */
type KeyPath<T> = {
  [K in keyof T & string]: NonNullable<T[K]> extends readonly unknown[] ? K : NonNullable<T[K]> extends object ? K | `${K}.${KeyPath<NonNullable<T[K]>>}` : K;
}[keyof T & string];
export type AgentConfigKey = KeyPath<AgentConfig>;

interface Flag {
  flag: string;
  key: AgentConfigKey;
  option: Options;
  /** Turns the flag's value into the config value; throws ConfigError naming the flag. */
  toConfig?: (value: unknown) => unknown;
  /** Shown when the schema has no description for the key. */
  describe?: string;
}

function parseLimits(value: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of ([] as unknown[]).concat(value)) {
    const m = /^([a-z0-9_]+)=(\d+)$/.exec(String(item).trim());
    if (!m || !(LIMIT_KEYS as readonly string[]).includes(m[1]!)) {
      throw new ConfigError(`--limit must be <method_key>=<non-negative integer> with method_key one of ${LIMIT_KEYS.join(', ')}, got ${JSON.stringify(item)}`);
    }
    out[m[1]!] = Number(m[2]);
  }
  return out;
}

/** Every agent flag, once. The flag → key mapping here is the only one. */
export const FLAGS: readonly Flag[] = [
  { flag: 'socket', key: 'socket', option: { type: 'string' } },
  { flag: 'trust-domain', key: 'trustDomain', option: { type: 'string' } },
  { flag: 'placement', key: 'rateLimit.placement', option: { type: 'string', choices: PLACEMENTS } },
  { flag: 'key', key: 'rateLimit.key', option: { type: 'string', choices: KEY_STRATEGIES } },
  {
    flag: 'limit',
    key: 'rateLimit.limits',
    option: { type: 'string', array: true },
    toConfig: parseLimits,
    describe: `Per-method limit <method_key>=<n> per second per key (repeatable; method_key: ${LIMIT_KEYS.join(', ')})`,
  },
  { flag: 'reject-status', key: 'rateLimit.rejectStatus', option: { type: 'string', choices: ['unavailable', 'resource-exhausted'] } },
  { flag: 'attestor', key: 'attestors', option: { type: 'string', array: true, choices: ATTESTORS }, describe: 'Workload attestor to run (repeatable)' },
  { flag: 'kubelet-url', key: 'k8s.kubeletUrl', option: { type: 'string' } },
  { flag: 'proc-root', key: 'procRoot', option: { type: 'string' } },
  { flag: 'entries', key: 'entries', option: { type: 'string' } },
  { flag: 'metrics', key: 'metrics', option: { type: 'string' }, describe: 'Serve Prometheus metrics on host:port at /metrics (port 0: any free port)' },
  { flag: 'working-set', key: 'model.attestationWorkingSet', option: { type: 'string' } },
  { flag: 'cancel-abandoned', key: 'model.cancelAbandoned', option: { type: 'boolean' } },
];

/** The schema's description of a dotted key (descriptions sit on the object or its default wrapper). */
function schemaDescription(key: string): string | undefined {
  let node: unknown = agentConfigSchema;
  let description: string | undefined;
  for (const part of key.split('.')) {
    let inner = node as { shape?: Record<string, unknown>; _zod?: { def: { innerType?: unknown } } };
    while (!inner.shape && inner._zod?.def.innerType) inner = inner._zod.def.innerType as typeof inner;
    node = inner.shape?.[part];
    if (!node) return undefined;
    description = (node as { description?: string }).description;
  }
  let inner = node as { description?: string; _zod?: { def: { innerType?: unknown } } };
  while (!description && inner._zod?.def.innerType) {
    inner = inner._zod.def.innerType as typeof inner;
    description = inner.description;
  }
  return description;
}

/** The schema's default for a dotted key, for the help text ("default: …"). */
function schemaDefault(key: string): string {
  let v: unknown = parseAgentConfig({});
  for (const part of key.split('.')) v = v === null || typeof v !== 'object' ? undefined : (v as Record<string, unknown>)[part];
  if (v === undefined) return 'none';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function setPath(target: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let obj = target;
  for (const p of parts.slice(0, -1)) {
    const next = obj[p];
    obj = obj[p] = next !== null && typeof next === 'object' && !Array.isArray(next) ? { ...(next as object) } : {};
  }
  const last = parts[parts.length - 1]!;
  const prev = obj[last];
  // --limit adds to the file's limits rather than replacing them.
  obj[last] =
    value !== null && typeof value === 'object' && !Array.isArray(value) && prev !== null && typeof prev === 'object'
      ? { ...(prev as object), ...(value as object) }
      : value;
}

export type AgentArgs = { config?: string } & Record<string, unknown>;

/** File overlaid by flags, validated. Problems name the flag when a flag set the key. */
export function agentConfigFromArgs(argv: AgentArgs): AgentConfig {
  const base = argv.config ? (readAgentConfigFile(argv.config) as Record<string, unknown>) : {};
  if (base === null || typeof base !== 'object' || Array.isArray(base)) {
    throw new ConfigError(`--config ${argv.config}: must be a YAML mapping of agent settings`);
  }
  const merged: Record<string, unknown> = { ...base };
  const given: Flag[] = [];
  for (const f of FLAGS) {
    const v = argv[camel(f.flag)];
    if (v === undefined) continue;
    given.push(f);
    setPath(merged, f.key, f.toConfig ? f.toConfig(v) : v);
  }
  try {
    return parseAgentConfig(merged);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(
      err.problems.map((p) => {
        const f = given.find((g) => p === g.key || p.startsWith(`${g.key} `) || p.startsWith(`${g.key}:`) || p.startsWith(`${g.key}.`));
        if (f)
          return `--${f.flag} ${p
            .slice(f.key.length)
            .replace(/^[:.]\s*/, '')
            .trimStart()} (${p.split(/[ :]/)[0]})`;
        return argv.config ? `--config ${argv.config}: ${p}` : p;
      }),
    );
  }
}

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Serves until SIGTERM/SIGINT (or the owner's IPC channel closes), then drains: see untilStopped. */
export async function runAgent(cfg: AgentConfig): Promise<void> {
  const agent: RunningAgent = await startAgent(cfg, { graceMs: STOP_GRACE_MS });
  const stopped = untilStopped(agent, (m) => process.stderr.write(`attestorm agent: ${m}\n`));
  process.stdout.write(readyLine(agent));
  process.stderr.write(`attestorm agent: serving ${agent.socketPath} (placement ${cfg.rateLimit.placement}, attestors ${cfg.attestors.join(',')})\n`);
  await stopped;
}

export const agentCommand: CommandModule<object, AgentArgs> = {
  command: 'agent',
  describe: 'Run the reference SPIFFE Workload API agent with a switchable rate-limiter placement',
  builder: (y: Argv) => {
    let out = y.option('config', { type: 'string', describe: 'Agent config YAML; flags override its keys' });
    for (const f of FLAGS) {
      const text = f.describe ?? schemaDescription(f.key) ?? '';
      out = out.option(f.flag, { ...f.option, describe: `${text} [config: ${f.key}; default: ${schemaDefault(f.key)}]` });
    }
    return out
      .example('$0 agent --socket /tmp/agent.sock --metrics 127.0.0.1:0', 'serve with derived identities, no limiter')
      .example(
        '$0 agent --socket /tmp/agent.sock --placement pre-attestation --limit fetch_jwt_svid=10',
        '10 FetchJWTSVID calls per second per pod, checked before attestation',
      )
      .example('$0 agent --config agent.yaml --placement post-attestation', 'a config file with one key overridden') as unknown as Argv<AgentArgs>;
  },
  handler: async (argv) => {
    await runAgent(agentConfigFromArgs(argv));
    // Closed: exit now, as the runner's agent entry does, whatever handle a cut call left behind.
    process.exit(EXIT.OK);
  },
};
