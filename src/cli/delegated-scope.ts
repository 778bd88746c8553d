// Commands that make cgroups re-run themselves in a delegated systemd scope when the runner shares
// its cgroup v2 cgroup with other processes (a login session beside the shell, a service with its
// helpers): only there may it enable controllers for the agents' and pods' cgroups.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DELEGATED_SCOPE_ENV, planCgroupSetup } from '../cgroup/index.js';

/** The commands that start agents and pods in cgroups of their own. */
const CGROUP_COMMANDS = new Set(['run', 'sweep', 'stability', 'bisect', 'bisect-step']);

/** Whether a systemd manager answers here: the system one for root, the user's own otherwise. */
function managerReachable(uid: number): boolean {
  if (uid === 0) return existsSync('/run/systemd/private');
  const runtime = process.env['XDG_RUNTIME_DIR'];
  return !!runtime && (existsSync(join(runtime, 'systemd', 'private')) || existsSync(join(runtime, 'bus')));
}

/**
 * Runs this very command again in a transient scope with Delegate=yes when it must, and returns its
 * exit status; null when it need not (v1, alone in its cgroup, already re-run, another command).
 */
export async function reRunInDelegatedScope(argv: readonly string[] = process.argv): Promise<number | null> {
  const command = argv[2];
  if (command === undefined || !CGROUP_COMMANDS.has(command) || argv.includes('--help') || argv.includes('-h')) return null;
  if (process.env[DELEGATED_SCOPE_ENV]) return null;
  const setup = planCgroupSetup([process.execPath, ...process.execArgv, ...argv.slice(1)]);
  if (setup.version !== 'v2' || setup.plan.action !== 'reexec') return null;
  const uid = process.getuid?.() ?? 0;
  // Without a manager to ask, the run goes on and its cgroup check names the way that would work.
  if (!managerReachable(uid)) return null;
  const [program, ...args] = setup.plan.command;
  const unit = setup.plan.command.find((a) => a.startsWith('--unit='))!.slice('--unit='.length);
  process.stderr.write(`attestorm: ${setup.plan.detail}\n`);
  const child = spawn(program!, args, { stdio: 'inherit', env: { ...process.env, [DELEGATED_SCOPE_ENV]: unit } });
  // Ctrl-C reaches both processes (one process group): this one only waits. A signal sent to this
  // process alone (kill, a service manager) is passed on, so the run inside ends as it would.
  const pass = (signal: NodeJS.Signals) => () => child.kill(signal);
  process.on('SIGINT', () => {});
  process.on('SIGTERM', pass('SIGTERM'));
  process.on('SIGHUP', pass('SIGHUP'));
  return await new Promise<number>((resolve) => {
    child.on('error', (err) => {
      process.stderr.write(`attestorm: cannot start ${program}: ${err.message}\n`);
      resolve(3);
    });
    child.on('exit', (code, signal) => resolve(code ?? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 2)));
  });
}
