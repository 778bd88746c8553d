// Finding the user's own spire-server and spire-agent: from a given folder, else $SPIRE_BIN_DIR,
// else PATH. attestorm ships no SPIRE; a missing or unusable binary is a PlatformError naming
// every place that was searched.
import { execFile } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { ChildProcessError, PlatformError } from '../errors.js';

const run = promisify(execFile);

export type SpireBinaryName = 'spire-server' | 'spire-agent';

export interface SpireBinaries {
  server: string;
  agent: string;
  /** Where they were found: the given binDir, $SPIRE_BIN_DIR or PATH. */
  source: 'binDir' | 'SPIRE_BIN_DIR' | 'PATH';
}

export interface FindSpireOptions {
  /** The folder holding both binaries; when given, nothing else is searched. */
  binDir?: string;
  /** Defaults to process.env (SPIRE_BIN_DIR, PATH). */
  env?: NodeJS.ProcessEnv;
}

/** Why a candidate file cannot be used, or null when it can. */
function unusable(path: string): string | null {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 'does not exist';
  }
  if (!st.isFile()) return 'is not a regular file';
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return `is not executable (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`;
  }
  return null;
}

function findOne(name: SpireBinaryName, dirs: readonly string[], where: string): string {
  const tried: string[] = [];
  for (const dir of dirs) {
    const path = join(dir || '.', name);
    const why = unusable(path);
    if (why === null) return path;
    // A file that is there but unusable is the answer the user needs, not "not found".
    if (why !== 'does not exist') throw new PlatformError(`${name}: ${path} ${why} (looked in ${where}); chmod +x it or point the harness at a usable build`);
    tried.push(path);
  }
  throw new PlatformError(
    `${name} not found: looked in ${where} (${tried.join(', ') || 'no folders'}). attestorm does not ship SPIRE: ` +
      'build it or unpack a release, then set agent.binDir in the scenario or SPIRE_BIN_DIR to the folder holding spire-server and spire-agent',
  );
}

/** Both binaries from one place; throws PlatformError naming the paths and where they were looked for. */
export function findSpireBinaries(opts: FindSpireOptions = {}): SpireBinaries {
  const env = opts.env ?? process.env;
  let dirs: string[];
  let where: string;
  let source: SpireBinaries['source'];
  if (opts.binDir !== undefined && opts.binDir !== '') {
    dirs = [opts.binDir];
    where = `binDir ${opts.binDir}`;
    source = 'binDir';
  } else if (env.SPIRE_BIN_DIR) {
    dirs = [env.SPIRE_BIN_DIR];
    where = `$SPIRE_BIN_DIR ${env.SPIRE_BIN_DIR} (no binDir given)`;
    source = 'SPIRE_BIN_DIR';
  } else {
    dirs = [...new Set((env.PATH ?? '').split(delimiter).filter((d) => d !== ''))];
    where = 'PATH (no binDir given, SPIRE_BIN_DIR unset)';
    source = 'PATH';
  }
  return { server: findOne('spire-server', dirs, where), agent: findOne('spire-agent', dirs, where), source };
}

/** The binary's own version string (`<binary> --version`, which both print on stderr). */
export async function spireVersion(binary: string): Promise<string> {
  try {
    const { stdout, stderr } = await run(binary, ['--version'], { timeout: 10_000 });
    const text = `${stdout}\n${stderr}`
      .trim()
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    if (text.length === 0) throw new Error('printed nothing');
    return text[0]!;
  } catch (err) {
    throw new ChildProcessError(`${binary} --version failed: ${(err as Error).message.trim()}`, { cause: err });
  }
}
