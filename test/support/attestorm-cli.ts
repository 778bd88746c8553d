// The attestorm CLI as a user runs it, against a real cluster's kubeconfig: its exit code and stderr.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');

export function attestormCli(args: string[], kubeconfig: string | undefined): Promise<{ code: number; stderr: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/attestorm.js'), ...args], { cwd: ROOT, env: { ...process.env, KUBECONFIG: kubeconfig } });
  let stderr = '';
  child.stdout!.resume();
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stderr })));
}
