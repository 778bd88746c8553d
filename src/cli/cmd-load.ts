// `attestorm load`: runs the forking-worker load generator against any Workload API socket, with
// the pods in a local sandbox (kubelet-named cgroups and a kubelet emulator) unless --no-sandbox.
// Flags are declared once, in FLAGS, each naming the option it sets; everything is validated —
// load options and sandbox options — before any process starts. Human output on stderr, --json
// prints the LoadSummary on stdout.
import { statSync } from 'node:fs';
import type { Argv, CommandModule, Options } from 'yargs';
import { ConfigError } from '../errors.js';
import {
  LOAD_DEFAULTS,
  LOAD_DESCRIPTIONS,
  LOAD_FLAGS,
  formatStatusLine,
  formatSummaryTable,
  problemAsFlag,
  runLoad,
  validateLoadOptions,
  type LoadFlag,
  type LoadOptions,
  type ResolvedLoadOptions,
} from '../load/index.js';
import { createSandbox, newRunId, parseSandboxOptions, type Sandbox, type SandboxOptions } from '../sandbox/index.js';
import type { Scenario } from '../scenario/index.js';
import { onCleanup, onInterrupt, parseDurationMs } from '../util/index.js';

type Target = { load: keyof LoadOptions } | { sandbox: 'kubelet.listen' | 'kubelet.visibilityDelayMs' | 'podLifetimeMs' | 'uidMode' | 'cgroupDriver' };

interface Flag {
  flag: string;
  target: Target;
  option: Options;
  /** Flag value → option value; throws ConfigError naming the flag. */
  convert?: (value: unknown, flag: string) => unknown;
}

function duration(value: unknown, flag: string): number {
  const ms = parseDurationMs(String(value));
  if (ms === null) throw new ConfigError(`--${flag} must be a duration like 500ms, 30s or 2m, got ${JSON.stringify(value)}`);
  return ms;
}

const D = LOAD_DEFAULTS;
// A load option's flag as the load generator declares it (LOAD_FLAGS), shared with the generator pods.
const load = (f: LoadFlag): Flag => ({ flag: f.flag, target: { load: f.key }, option: f.option, ...(f.parse ? { convert: f.parse } : {}) });

/**
 * A flag for every key of the scenario's `load` block, typed from it: a new scenario key does not
 * compile until it has a flag here (or says why it has none). Defaults and descriptions come from
 * the load generator's one table (LOAD_DEFAULTS, LOAD_DESCRIPTIONS), as the scenario schema's do.
 */
export const SCENARIO_LOAD_FLAGS: { [K in keyof Scenario['load']]-?: Flag | { none: string } } = {
  pods: load(LOAD_FLAGS.pods),
  workersPerPod: load(LOAD_FLAGS.workersPerPod),
  connection: load(LOAD_FLAGS.connection),
  client: load(LOAD_FLAGS.client),
  rate: load(LOAD_FLAGS.rate),
  deadline: load(LOAD_FLAGS.deadlineMs),
  retry: load(LOAD_FLAGS.retry),
  methods: load(LOAD_FLAGS.methods),
  audience: load(LOAD_FLAGS.audience),
  podLifetime: {
    flag: 'pod-lifetime',
    target: { sandbox: 'podLifetimeMs' },
    convert: duration,
    option: { type: 'string', describe: `${LOAD_DESCRIPTIONS.podLifetime} [default: pods live for the whole run]` },
  },
  uidMode: {
    flag: 'uid-mode',
    target: { sandbox: 'uidMode' },
    option: { type: 'string', choices: ['same', 'per-pod'], default: D.uidMode, describe: LOAD_DESCRIPTIONS.uidMode },
  },
  cgroupDriver: {
    flag: 'cgroup-driver',
    target: { sandbox: 'cgroupDriver' },
    option: { type: 'string', choices: ['cgroupfs', 'systemd'], default: D.cgroupDriver, describe: LOAD_DESCRIPTIONS.cgroupDriver },
  },
  bystanders: { none: 'a nested block (pods, rate, uid, ...): write a scenario to run bystanders' },
};

const isFlag = (f: Flag | { none: string }): f is Flag => 'flag' in f;

/** Every load flag, once: the scenario's load keys, then what only `attestorm load` has. */
export const FLAGS: readonly Flag[] = [
  load(LOAD_FLAGS.socket),
  ...Object.values(SCENARIO_LOAD_FLAGS).filter(isFlag),
  load(LOAD_FLAGS.durationMs),
  load(LOAD_FLAGS.maxCalls),
  {
    flag: 'kubelet',
    target: { sandbox: 'kubelet.listen' },
    option: { type: 'string', default: '127.0.0.1:0', describe: 'Kubelet emulator listen address, loopback host:port (port 0: any free port)' },
  },
  {
    flag: 'visibility-delay',
    target: { sandbox: 'kubelet.visibilityDelayMs' },
    convert: duration,
    option: { type: 'string', default: '0s', describe: 'Delay before a new pod shows up in the kubelet emulator /pods' },
  },
];

export interface LoadPlan {
  load: ResolvedLoadOptions;
  /** null with --no-sandbox. */
  sandbox: SandboxOptions | null;
}

/** Flags → validated load and sandbox options; a ConfigError names each bad flag and its rule. */
export function loadPlanFromArgs(argv: Record<string, unknown>): LoadPlan {
  const problems: string[] = [];
  const load: Record<string, unknown> = {};
  const sandbox: Record<string, unknown> = { kubelet: {} };
  for (const f of FLAGS) {
    const raw = argv[f.flag];
    if (raw === undefined) continue;
    let value: unknown;
    try {
      value = f.convert ? f.convert(raw, f.flag) : raw;
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
      continue;
    }
    if ('load' in f.target) load[f.target.load] = value;
    else if (f.target.sandbox.startsWith('kubelet.')) (sandbox.kubelet as Record<string, unknown>)[f.target.sandbox.slice(8)] = value;
    else sandbox[f.target.sandbox] = value;
  }
  if (argv.socket === undefined) problems.push('--socket is required: the Unix socket of the Workload API server to load');
  let resolved: ResolvedLoadOptions | null = null;
  try {
    resolved = validateLoadOptions(load, '');
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const p of err.problems) {
      if (/^socket\b/.test(p) && argv.socket === undefined) continue;
      problems.push(problemAsFlag(p));
    }
  }
  if (resolved && problems.length === 0) {
    let isSocket = false;
    try {
      isSocket = statSync(resolved.socket).isSocket();
    } catch {
      // reported below
    }
    if (!isSocket) problems.push(`--socket must be an existing Unix socket (is the agent running?), got ${JSON.stringify(resolved.socket)}`);
  }
  let sandboxOpts: SandboxOptions | null = null;
  if (argv.sandbox !== false) {
    sandboxOpts = { runId: newRunId('load'), pods: resolved?.pods ?? 1, ...sandbox } as SandboxOptions;
    try {
      parseSandboxOptions(sandboxOpts);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(
        ...err.problems.map((p) =>
          p
            .replace(/^sandbox\.kubelet\.listen/, '--kubelet')
            .replace(/^sandbox\.kubelet\.visibilityDelayMs/, '--visibility-delay')
            .replace(/^sandbox\.podLifetimeMs/, '--pod-lifetime')
            .replace(/^sandbox\.uidMode/, '--uid-mode')
            .replace(/^sandbox\.cgroupDriver/, '--cgroup-driver'),
        ),
      );
    }
  }
  if (problems.length) throw new ConfigError(problems);
  return { load: resolved!, sandbox: sandboxOpts };
}

export const loadCommand: CommandModule<object, Record<string, unknown>> = {
  command: 'load',
  describe: 'Drive N pods × M worker processes against a Workload API socket for a bounded time',
  builder: (y: Argv) => {
    let b = y;
    for (const f of FLAGS) b = b.option(f.flag, f.option);
    return b
      .option('sandbox', {
        type: 'boolean',
        default: true,
        describe: 'Run pods in the local sandbox (cgroups, kubelet emulator); --no-sandbox: plain local processes',
      })
      .option('json', { type: 'boolean', default: false, describe: 'Print the summary as JSON on stdout' })
      .example('$0 load --socket /tmp/agent.sock', '1 pod × 10 workers, a new connection per call, for 30s')
      .example('$0 load --socket /run/spire/agent.sock --pods 4 --workers 100 --duration 2m --json', 'The storm from the field report, JSON summary on stdout')
      .example(
        '$0 load --socket /tmp/agent.sock --connection per-worker --rate 20 --method FetchJWTSVID=9 --method ValidateJWTSVID=1',
        'Well-behaved clients at 20 calls/s each, a method mix',
      )
      .example(
        '$0 load --socket /tmp/agent.sock --pod-lifetime 10s --visibility-delay 2s',
        'Short-lived pods that the kubelet lists only after 2s',
      ) as unknown as Argv<Record<string, unknown>>;
  },
  handler: async (argv) => {
    const plan = loadPlanFromArgs(argv);
    const controller = new AbortController();
    const offInterrupt = onInterrupt(() => controller.abort());
    let sandbox: Sandbox | null = null;
    let offCleanup = () => {};
    try {
      if (plan.sandbox) {
        sandbox = await createSandbox(plan.sandbox);
        const sb = sandbox;
        offCleanup = onCleanup(() => sb.close());
        process.stderr.write(`attestorm load: sandbox ${sb.runId} (${sb.fidelity}), kubelet emulator at ${sb.kubeletUrl}\n`);
      }
      const live = process.stderr.isTTY === true;
      const summary = await runLoad(plan.load, {
        ...(sandbox ? { sandbox } : {}),
        signal: controller.signal,
        onSecond: live ? (s) => process.stderr.write(`\r\x1b[K${formatStatusLine(s)}`) : undefined,
      });
      if (live) process.stderr.write('\r\x1b[K');
      process.stderr.write(formatSummaryTable(summary));
      if (argv.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
    } finally {
      offInterrupt();
      if (sandbox) await sandbox.close();
      offCleanup();
    }
  },
};
