// One build command of a step: at nice 19, in a process group of its own (a Go build forks
// compilers and cgo's gcc), its output appended to the step's build.log and kept for reading.
// Interrupted, the whole group gets SIGTERM, then SIGKILL after a grace period: no compiler
// outlives the bisect.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { PlatformError } from '../errors.js';
import { onCleanup } from '../util/index.js';

export interface BuildRun {
  code: number;
  /** stdout and stderr as they came, interleaved. */
  output: string;
}

export interface BuildCommand {
  /** The program and its arguments (run under `nice -n 19`). */
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  logFile: string;
  signal?: AbortSignal;
}

const GRACE_MS = 5000;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is gone.
  }
}

/** Runs the command to its end (or its interruption: code 130); throws only when it cannot start. */
export function runBuild(cmd: BuildCommand): Promise<BuildRun> {
  appendFileSync(cmd.logFile, `$ ${cmd.argv.join(' ')}\n`);
  return new Promise((resolve, reject) => {
    const child = spawn('nice', ['-n', '19', ...cmd.argv], { cwd: cmd.cwd, env: cmd.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    let exited = false;
    const take = (d: Buffer) => {
      output += d.toString();
      appendFileSync(cmd.logFile, d);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const stop = () => {
      if (exited || child.pid === undefined) return Promise.resolve();
      const pid = child.pid;
      killGroup(pid, 'SIGTERM');
      const hard = setTimeout(() => killGroup(pid, 'SIGKILL'), GRACE_MS);
      return new Promise<void>((done) =>
        child.once('close', () => {
          clearTimeout(hard);
          done();
        }),
      );
    };
    const offCleanup = onCleanup(stop);
    const onAbort = () => void stop();
    cmd.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('error', (err: NodeJS.ErrnoException) => {
      exited = true;
      offCleanup();
      reject(new PlatformError(`${cmd.argv[0]} could not start: ${err.message}`, { cause: err }));
    });
    child.once('close', (code, signal) => {
      exited = true;
      offCleanup();
      cmd.signal?.removeEventListener('abort', onAbort);
      appendFileSync(cmd.logFile, `[exit ${code ?? signal}]\n`);
      resolve({ code: code ?? (signal ? 130 : 1), output });
    });
  });
}
