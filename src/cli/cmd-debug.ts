// `attestorm debug ...`: answers "why is my workload not attested?" with the agent's own code.
// Today one topic: `debug cgroup` prints the pod UID and container ID the k8s attestor would see, or
// with --host this machine's cgroup setup and the runner's v2 delegation decision.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { parseCgroup } from '../agent/index.js';
import { planCgroupSetup } from '../cgroup/index.js';
import { ConfigError } from '../errors.js';

export interface DebugCgroupArgs {
  /** A saved /proc/<pid>/cgroup file. */
  file?: string;
  /** A live process; its cgroup file is read under procRoot. A string as typed on the command line. */
  pid?: number | string;
  procRoot?: string;
  /** Print this machine's cgroup setup and the runner's delegation decision instead. */
  host?: boolean;
}

/** Where a run started here would make its cgroups, and how it would come by them (nothing is moved). */
export function debugCgroupHost(): Record<string, unknown> {
  const setup = planCgroupSetup();
  if (setup.version !== 'v2') return { ...setup };
  const plan = setup.plan;
  const decision =
    plan.action === 'in-leaf'
      ? { decision: 'in-leaf', base: plan.base, detail: 'the runner already sits in its leaf; its cgroups go in the cgroup above' }
      : plan.action === 'refuse'
        ? { decision: 'refuse', reason: plan.reason }
        : plan.action === 'reexec'
          ? { decision: plan.kind, command: plan.command.join(' '), detail: plan.detail }
          : { decision: plan.kind, base: plan.base, detail: plan.detail };
  return { version: 'v2', ownCgroup: setup.own, uid: process.getuid?.() ?? null, systemd: existsSync('/run/systemd/system'), ...decision };
}

/** What the parser makes of the file or process; throws ConfigError for bad or unreadable input. */
export function debugCgroup(args: DebugCgroupArgs): { podUID: string | null; containerID: string | null } {
  const hasFile = args.file !== undefined && args.file !== '';
  const hasPid = args.pid !== undefined;
  if (hasFile && hasPid) throw new ConfigError('debug cgroup takes either <file> or --pid, not both');
  if (!hasFile && !hasPid) throw new ConfigError('debug cgroup needs a cgroup file (debug cgroup <file>) or --pid <pid>, or --host for this machine');
  let path: string;
  let what: string;
  if (hasPid) {
    const pid = Number(args.pid);
    if (!/^\d+$/.test(String(args.pid).trim()) || !Number.isSafeInteger(pid) || pid <= 0) {
      throw new ConfigError(`--pid must be a positive integer, got ${JSON.stringify(args.pid)}`);
    }
    path = join(args.procRoot ?? '/proc', String(pid), 'cgroup');
    what = `--pid ${pid}`;
  } else {
    path = args.file!;
    what = `<file> ${path}`;
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const hint = hasPid ? ' (is the process running, and is --proc-root right?)' : '';
    throw new ConfigError(`${what}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}${hint}`);
  }
  const { podUID, containerID } = parseCgroup(text);
  return { podUID, containerID };
}

const cgroupCommand: CommandModule<object, DebugCgroupArgs> = {
  command: 'cgroup [file]',
  describe:
    'Print {"podUID", "containerID"} parsed from a /proc/<pid>/cgroup file or a live process (nulls: not in a pod), or with --host where a run here would make its cgroups',
  builder: (y: Argv) =>
    y
      .positional('file', { type: 'string', describe: 'A saved /proc/<pid>/cgroup file' })
      .option('pid', { type: 'string', describe: 'Read /proc/<pid>/cgroup of a running process instead' })
      .option('proc-root', { type: 'string', default: '/proc', describe: 'procfs to read --pid from (like HOST_PROC)' })
      .option('host', {
        type: 'boolean',
        describe:
          "Print this machine's cgroup setup instead: the version, the runner's cgroup and how a run would get a subtree to make cgroups in (v2 delegation)",
      })
      .example('$0 debug cgroup --pid 4242', 'what the k8s attestor sees for process 4242')
      .example('$0 debug cgroup ./cgroup.txt', 'parse a file copied from a node')
      .example('$0 debug cgroup --host', 'where a run here would make its cgroups, and how') as unknown as Argv<DebugCgroupArgs>,
  handler: (argv) => {
    if (argv.host) {
      if (argv.file !== undefined || argv.pid !== undefined) throw new ConfigError('debug cgroup --host takes no <file> and no --pid');
      process.stdout.write(`${JSON.stringify(debugCgroupHost(), null, 2)}\n`);
      return;
    }
    const result = debugCgroup({ file: argv.file, pid: argv.pid, procRoot: argv.procRoot });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  },
};

export const debugCommand: CommandModule = {
  command: 'debug <topic>',
  describe: 'Inspect what the agent would see for a workload',
  builder: (y: Argv) => y.command(cgroupCommand as unknown as CommandModule).demandCommand(1, 'Name a debug topic: cgroup'),
  handler: () => {},
};
