// The Dockerfile, checked without a Docker engine (none on this machine): dockerfile-utils'
// validator, the rules kind mode relies on, and its bundle step run for real with esbuild.
import { readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { validate } from 'dockerfile-utils';
import { PROJECT_CLI, PROJECT_UID } from '../../src/kube/index.js';

const ROOT = join(import.meta.dirname, '../..');
const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
// Built like the image's /app/dist/cli/main.mjs: two levels below the project root.
const out = join(ROOT, `.image-test-${process.pid}`);
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('Dockerfile', () => {
  it('has no diagnostics from dockerfile-utils', () => {
    expect(validate(text)).toEqual([]);
  });

  it('dockerfile-utils does report a broken Dockerfile (the check can fail)', () => {
    expect(validate('FROM node:20\nCOPY onlyone\nUSER\n').length).toBeGreaterThan(0);
  });

  it('multi-stage, production dependencies only, non-root, `attestorm agent` on plain node as entrypoint', () => {
    expect(text.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/^RUN npm ci --omit=dev/m);
    const users = [...text.matchAll(/^USER (\S+)$/gm)].map((m) => m[1]);
    expect(users.at(-1)).toBe('node'); // uid 1000 in node images
    expect(PROJECT_UID).toBe(1000);
    expect(text).toContain('ENTRYPOINT ["node", "/app/dist/cli/agent-main.mjs", "agent"]');
    // The generator pods run the full CLI bundle built next to it.
    expect(PROJECT_CLI).toBe('/app/dist/cli/main.mjs');
    expect(text).toMatch(/esbuild src\/cli\/main\.ts src\/cli\/agent-main\.ts .*--packages=external --outdir=dist\/cli --out-extension:\.js=\.mjs/s);
    expect(text).not.toMatch(/ENTRYPOINT.*tsx/);
  });

  it("carries the native load worker, compiled statically in the build stage by the runner's own build (no compiler in the final image)", () => {
    const stages = text.split(/^FROM /m).slice(1);
    const build = stages.find((st) => /^\S+ AS build$/m.test(st))!;
    const final = stages.at(-1)!;
    // The compiler and the C library's static archive, from Debian's packages, in the build stage only.
    expect(build).toMatch(/^RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev /m);
    expect(final).not.toMatch(/gcc|apt-get/);
    // The script it runs exists and builds with build.ts (its flags), into dist/ which the final stage copies.
    const step = /^RUN npx tsx (src\/cli\/prebuild-native\.ts)$/m.exec(build);
    expect(step, 'the build stage runs the native prebuild').not.toBeNull();
    expect(readFileSync(join(ROOT, step![1]!), 'utf8')).toContain('prebuildNativeWorker(');
    expect(build.indexOf('COPY src ./src')).toBeLessThan(build.indexOf(step![0]));
    expect(final).toContain('COPY --from=build /app/dist ./dist');
    // The final stage carries the sources the binary's key is computed from at run time.
    expect(final).toMatch(/^COPY src \.\/src$/m);
  });

  it('its bundle step builds, and the bundle imports only production dependencies', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const { build } = await import('esbuild');
    const result = await build({
      entryPoints: [join(ROOT, 'src/cli/main.ts'), join(ROOT, 'src/cli/agent-main.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outdir: join(out, 'cli'),
      outExtension: { '.js': '.mjs' },
      metafile: true,
      logLevel: 'silent',
    });
    const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
    const packages = new Set(
      imports
        .filter((p) => !p.startsWith('node:') && !builtinModules.includes(p))
        .map((p) => (p.startsWith('@') ? p.split('/').slice(0, 2).join('/') : p.split('/')[0]!)),
    );
    expect(packages.size).toBeGreaterThan(5);
    for (const p of packages) expect(Object.keys(pkg.dependencies), `${p} is imported by the bundle but not a production dependency`).toContain(p);
  });

  it('the bundle runs on plain node (no tsx) from two levels below the project root', () => {
    const r = spawnSync(process.execPath, [join(out, 'cli/main.mjs'), 'kind', 'render', 'scenarios/quick.yaml'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('kind: DaemonSet');
    expect(r.stdout).toContain('hostPID: true');
    const agent = spawnSync(process.execPath, [join(out, 'cli/agent-main.mjs'), 'agent', '--help'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(agent.status, agent.stderr).toBe(0);
    expect(agent.stdout).toContain('--socket');
  });
});
