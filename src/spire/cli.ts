// One spire-server admin command (entry create, token generate, bundle show) against a running
// server's admin socket, with a timeout; a failure names the command and quotes SPIRE's words.
import { execFile } from 'node:child_process';
import { RunError } from '../errors.js';

export interface CliResult {
  stdout: string;
  stderr: string;
}

export function serverCli(binary: string, adminSocket: string, args: readonly string[], timeoutMs = 30_000): Promise<CliResult> {
  const full = [...args, '-socketPath', adminSocket];
  return new Promise((resolve, reject) => {
    execFile(binary, full, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (!err) return resolve({ stdout, stderr });
      const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: number | string };
      const why = e.killed ? `timed out after ${timeoutMs} ms` : typeof e.code === 'number' ? `exit code ${e.code}` : e.message;
      const said = `${stderr}\n${stdout}`.trim().split('\n').slice(-6).join('\n    ');
      reject(
        new RunError(`spire-server ${args.slice(0, 2).join(' ')} failed (${why}): ${said || 'no output'}\n  command: ${binary} ${full.join(' ')}`, {
          cause: err,
        }),
      );
    });
  });
}
