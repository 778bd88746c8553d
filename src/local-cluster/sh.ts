// Running the host's tools (ip, iptables, mount, ctr, umoci, buildah, go): output captured, a tool
// that is missing becomes a PlatformError that names the Debian package to install.
import { spawn } from 'node:child_process';
import { PlatformError } from '../errors.js';

export interface ShResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Which Debian package brings a tool, for the error message. */
export const PACKAGE_OF: Record<string, string> = {
  containerd: 'containerd',
  ctr: 'containerd',
  runc: 'runc',
  ip: 'iproute2',
  iptables: 'iptables',
  'iptables-save': 'iptables',
  ip6tables: 'iptables',
  'ip6tables-save': 'iptables',
  umount: 'mount',
  umoci: 'umoci',
  buildah: 'buildah',
  skopeo: 'skopeo',
  debootstrap: 'debootstrap',
  gcc: 'gcc libc6-dev',
  go: 'golang (1.24 or newer: Debian 12 ships 1.19, use https://go.dev/dl or a backport)',
  nice: 'coreutils',
};

export interface ShOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Pass output through to this process's stderr (long builds). */
  inherit?: boolean;
  /** Resolve with a non-zero code instead of throwing. */
  allowFail?: boolean;
  input?: string;
}

export function sh(tool: string, args: string[], opts: ShOptions = {}): Promise<ShResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', opts.inherit ? 'inherit' : 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (opts.inherit) process.stderr.write(d);
    });
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') reject(new PlatformError(`\`${tool}\` is not on PATH: apt-get install ${PACKAGE_OF[tool] ?? tool}`));
      else reject(new PlatformError(`${tool} could not start: ${err.message}`, { cause: err }));
    });
    child.once('close', (code) => {
      const r = { code: code ?? 1, stdout, stderr };
      if (r.code !== 0 && !opts.allowFail)
        reject(new PlatformError(`${tool} ${args.join(' ')} failed (exit ${r.code}): ${(stderr || stdout).trim().split('\n').slice(-5).join(' | ')}`));
      else resolve(r);
    });
  });
}
