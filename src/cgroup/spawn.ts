// Starts a process already inside a cgroup: a shell writes its own PID into cgroup.procs and then
// execs the command, so every byte the command allocates is charged to the cgroup from the start.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { join } from 'node:path';
import type { Cgroup } from './cgroup.js';

export function procsFiles(cgroup: Cgroup): string[] {
  const files = [join(cgroup.path, 'cgroup.procs')];
  if (cgroup.cpuPath) files.push(join(cgroup.cpuPath, 'cgroup.procs'));
  if (cgroup.freezerPath) files.push(join(cgroup.freezerPath, 'cgroup.procs'));
  if (cgroup.cpusetPath) files.push(join(cgroup.cpusetPath, 'cgroup.procs'));
  return files;
}

/** Like child_process.spawn, but the child runs inside `cgroup` (null: spawn as usual). */
export function spawnInCgroup(cgroup: Cgroup | null, command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  if (!cgroup) return spawn(command, args, options);
  const files = procsFiles(cgroup);
  // $1..$n are the procs files, then the command; the count tells the script where the command starts.
  const script = `n=$1; shift; i=0; while [ $i -lt $n ]; do echo $$ > "$1" || exit 125; shift; i=$((i+1)); done; exec "$@"`;
  return spawn('/bin/sh', ['-c', script, 'attestorm-cgroup-exec', String(files.length), ...files, command, ...args], options);
}
