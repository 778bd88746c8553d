// `attestorm debug ...`: answers "why is my workload not attested?" with the agent's own code.
// Today one topic: `debug cgroup` prints the pod UID and container ID the k8s attestor would see.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { parseCgroup } from '../agent/index.js';
import { ConfigError } from '../errors.js';

export interface DebugCgroupArgs {
  /** A saved /proc/<pid>/cgroup file. */
  file?: string;
  /** A live process; its cgroup file is read under procRoot. A string as typed on the command line. */
  pid?: number | string;
  procRoot?: string;
}

/** What the parser makes of the file or process; throws ConfigError for bad or unreadable input. */
export function debugCgroup(args: DebugCgroupArgs): { podUID: string | null; containerID: string | null } {
  const hasFile = args.file !== undefined && args.file !== '';
  const hasPid = args.pid !== undefined;
  if (hasFile && hasPid) throw new ConfigError('debug cgroup takes either <file> or --pid, not both');
  if (!hasFile && !hasPid) throw new ConfigError('debug cgroup needs a cgroup file (debug cgroup <file>) or --pid <pid>');
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
  describe: 'Print {"podUID", "containerID"} parsed from a /proc/<pid>/cgroup file or a live process (nulls: not in a pod)',
  builder: (y: Argv) =>
    y
      .positional('file', { type: 'string', describe: 'A saved /proc/<pid>/cgroup file' })
      .option('pid', { type: 'string', describe: 'Read /proc/<pid>/cgroup of a running process instead' })
      .option('proc-root', { type: 'string', default: '/proc', describe: 'procfs to read --pid from (like HOST_PROC)' })
      .example('$0 debug cgroup --pid 4242', 'what the k8s attestor sees for process 4242')
      .example('$0 debug cgroup ./cgroup.txt', 'parse a file copied from a node') as unknown as Argv<DebugCgroupArgs>,
  handler: (argv) => {
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
