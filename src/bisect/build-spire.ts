// SPIRE's build, the default: `go build` of ./cmd/spire-server and ./cmd/spire-agent with cgo (the
// server's SQLite) and the local toolchain only, dependencies through the Go module proxy. The
// build reads a copy of go.mod and go.sum in the step's folder (-modfile), so neither the work tree
// nor a `git bisect run` checkout is ever edited; version replacements go into that copy. A
// version the proxy refuses is replaced by the nearest one it serves, and said.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { lastLines, type BuildContext, type BuildOutcome, type Builder } from './builder.js';
import { runBuild } from './build-process.js';
import { nearestServed, parseVersionsLine, refusedModules, type RefusedModule } from './go-modules.js';

export interface SpireBuildOptions {
  /** `go mod edit -replace` arguments (old[@v]=new[@v], local folders absolute), applied before the first build. */
  replace: readonly string[];
  /** GOCACHE and GOMODCACHE go under this folder; null: Go's own (go env GOCACHE, GOMODCACHE). */
  goCache: string | null;
}

export const SPIRE_COMMANDS = ['./cmd/spire-server', './cmd/spire-agent'] as const;
/** Rounds of "build, replace what the proxy refused": each round only meets modules the last one got past. */
const MAX_ROUNDS = 8;

/** The build's environment: cgo on, no toolchain download, a writable module cache (so it can be removed), no VCS stamping. */
export function spireGoEnv(goCache: string | null, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const flags = [env['GOFLAGS'] ?? '', '-modcacherw', '-buildvcs=false'].join(' ').trim();
  return {
    ...env,
    CGO_ENABLED: '1',
    GOTOOLCHAIN: 'local',
    GOFLAGS: flags,
    ...(goCache ? { GOCACHE: join(goCache, 'build'), GOMODCACHE: join(goCache, 'mod') } : {}),
  };
}

export function spireBuilder(o: SpireBuildOptions): Builder {
  const env = spireGoEnv(o.goCache);
  return {
    kind: 'spire',
    describe: `go build ${SPIRE_COMMANDS.join(' ')}`,
    problems: () => goProblems(env),
    build: (ctx) => buildSpire(ctx, o, env),
  };
}

async function goProblems(env: NodeJS.ProcessEnv): Promise<string[]> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve) => {
    execFile('go', ['env', 'GOCACHE', 'GOMODCACHE'], { env }, (err, stdout) => {
      if ((err as NodeJS.ErrnoException | null)?.code === 'ENOENT')
        return resolve(["SPIRE's build needs Go: `go` is not on PATH (install the Go release SPIRE's go.mod names, or give --build)"]);
      if (err) return resolve([`go env failed: ${err.message.split('\n')[0]}`]);
      const [cache, mod] = stdout.split('\n');
      if (!cache || cache === 'off' || !mod)
        resolve([`Go has no build or module cache here (go env GOCACHE=${cache ?? ''} GOMODCACHE=${mod ?? ''}): give --go-cache <dir>`]);
      else resolve([]);
    });
  });
}

async function buildSpire(ctx: BuildContext, o: SpireBuildOptions, env: NodeJS.ProcessEnv): Promise<BuildOutcome> {
  const replaced: string[] = [];
  if (!existsSync(join(ctx.workTree, 'go.mod')))
    return { ok: false, reason: 'no go.mod at the top of the work tree: not a Go module (give --build)', replaced };
  const modDir = join(ctx.stepDir, 'gomod');
  mkdirSync(modDir, { recursive: true });
  const modfile = join(modDir, 'go.mod');
  copyFileSync(join(ctx.workTree, 'go.mod'), modfile);
  if (existsSync(join(ctx.workTree, 'go.sum'))) copyFileSync(join(ctx.workTree, 'go.sum'), join(modDir, 'go.sum'));
  const go = (args: string[]) =>
    runBuild({ argv: ['go', ...args], cwd: ctx.workTree, env, logFile: ctx.logFile, ...(ctx.signal ? { signal: ctx.signal } : {}) });
  for (const r of o.replace) {
    const edit = await go(['mod', 'edit', `-replace=${r}`, modfile]);
    if (edit.code !== 0) return { ok: false, reason: `--replace ${r}: go mod edit refused it: ${lastLines(edit.output, 1)}`, replaced };
    replaced.push(`${r} (--replace)`);
  }
  const tried = new Set<string>();
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const built = await go(['build', `-modfile=${modfile}`, '-mod=mod', '-o', `${ctx.binDir}/`, ...SPIRE_COMMANDS]);
    if (built.code === 0) return { ok: true, replaced };
    if (ctx.signal?.aborted) return { ok: false, reason: 'interrupted', replaced };
    const refused = refusedModules(built.output).filter((m) => !tried.has(`${m.module}@${m.version}`));
    if (!refused.length) return { ok: false, reason: `go build failed (exit ${built.code}): ${lastLines(built.output) || 'no output'}`, replaced };
    const unserved: string[] = [];
    for (const m of refused) {
      tried.add(`${m.module}@${m.version}`);
      const near = await nearestVersion(m, ctx, env);
      if (typeof near !== 'string' || near === '') {
        unserved.push(
          `${m.module}@${m.version}: the module proxy refuses it (${m.line}) and serves no other version${near ? ` (${near.error})` : ''}; name a local checkout with --replace ${m.module}=<dir>`,
        );
        continue;
      }
      const edit = await go(['mod', 'edit', `-replace=${m.module}@${m.version}=${m.module}@${near}`, modfile]);
      if (edit.code !== 0) return { ok: false, reason: `go mod edit -replace ${m.module}@${m.version}=${near} failed: ${lastLines(edit.output, 1)}`, replaced };
      ctx.say(`${m.module} ${m.version} is refused by the module proxy; built with ${near}, the nearest version it serves`);
      replaced.push(`${m.module}@${m.version}=${m.module}@${near}`);
    }
    if (unserved.length === refused.length) return { ok: false, reason: unserved.join('; '), replaced };
  }
  return { ok: false, reason: `go build still failed after ${MAX_ROUNDS} rounds of replacing refused module versions (see build.log)`, replaced };
}

/**
 * The nearest version the proxy serves (go list -m -versions), '' when it lists none, or why it
 * could not be asked. Asked outside any module (from /): inside one, go would first load the
 * requirements, the refused version among them.
 */
async function nearestVersion(m: RefusedModule, ctx: BuildContext, env: NodeJS.ProcessEnv): Promise<string | { error: string }> {
  const listed = await runBuild({
    argv: ['go', 'list', '-m', '-versions', m.module],
    cwd: '/',
    env: { ...env, GOWORK: 'off' },
    logFile: ctx.logFile,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
  if (listed.code !== 0) return { error: `go list -m -versions: ${lastLines(listed.output, 1)}` };
  return nearestServed(m.version, parseVersionsLine(listed.output, m.module)) ?? '';
}
