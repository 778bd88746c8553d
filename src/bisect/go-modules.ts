// Module versions the Go module proxy will not serve, read from go's own error lines, and the
// nearest version it does serve: an old commit of an agent may pin a version since retracted or
// a pseudo-version of a commit the proxy never saw, and the build should not fail on that alone.
import semver from 'semver';

/** One module version go could not get, with the line that said so. */
export interface RefusedModule {
  module: string;
  version: string;
  line: string;
}

// What the proxy (or go, for a revision it cannot find) answers for a version it will not serve.
const REFUSALS = ['410 Gone', '404 Not Found', '403 Forbidden', 'not found', 'unknown revision', 'invalid version', 'This module version is not available'];
const MODULE_AT = /((?:[A-Za-z0-9._~-]+\/)*[A-Za-z0-9._~-]+)@(v[0-9][0-9A-Za-z.+-]*)/g;

/**
 * Every module@version that go's output names on a line (or the `server response:` line after it)
 * saying the version cannot be had, each once, in the order found.
 */
export function refusedModules(output: string): RefusedModule[] {
  const lines = output.split('\n');
  const found = new Map<string, RefusedModule>();
  for (const [i, line] of lines.entries()) {
    const context = `${line} ${lines[i + 1]?.trim().startsWith('server response:') ? lines[i + 1] : ''}`;
    if (!REFUSALS.some((r) => context.includes(r))) continue;
    for (const m of line.matchAll(MODULE_AT)) {
      // A URL's or the module cache's escaped path (%21keyfactor, !keyfactor) is not the module's
      // name; go's line names it plainly too.
      const before = line[m.index - 1];
      if (m[1]!.includes('%') || (before !== undefined && /[!%/\w.-]/.test(before))) continue;
      const version = m[2]!.replace(/\.+$/, '');
      const key = `${m[1]}@${version}`;
      if (!found.has(key)) found.set(key, { module: m[1]!, version, line: line.trim() });
    }
  }
  return [...found.values()];
}

/**
 * The served version nearest to `wanted`: the highest at or below it (a pseudo-version counts as
 * just below its base), else the lowest above it; null when nothing is served.
 */
export function nearestServed(wanted: string, served: readonly string[]): string | null {
  const valid = served.filter((v) => semver.valid(v) !== null && v !== wanted).sort((a, b) => semver.compare(a, b));
  if (semver.valid(wanted) === null) return valid.at(-1) ?? null;
  const below = valid.filter((v) => semver.lte(v, wanted));
  return below.at(-1) ?? valid[0] ?? null;
}

/** `go list -m -versions <module>` prints the module and its versions on one line. */
export function parseVersionsLine(text: string, module: string): string[] {
  const line = text.split('\n').find((l) => l.startsWith(`${module} `) || l === module);
  return line ? line.split(/\s+/).slice(1).filter(Boolean) : [];
}

/**
 * A --replace value as `go mod edit -replace` takes it (old[@v]=new[@v]), with a local folder on
 * the right made absolute: the build's go.mod lives outside the work tree. Null when malformed.
 */
export function replaceArgument(value: string, resolvePath: (p: string) => string): string | null {
  const eq = value.indexOf('=');
  if (eq <= 0 || eq === value.length - 1) return null;
  const left = value.slice(0, eq).trim();
  const right = value.slice(eq + 1).trim();
  if (!left || !right || /\s/.test(left) || /\s/.test(right)) return null;
  const local = right.startsWith('/') || right.startsWith('./') || right.startsWith('../') || right === '.' || right === '..';
  return `${left}=${local ? resolvePath(right) : right}`;
}
