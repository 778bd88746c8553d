// `npm run ci:act`: the project's GitHub workflow (.github/workflows/attestorm.yml) run on this host
// with nektos/act in host mode, as a pull request would run it: the `local` job, then the `kind` job
// (`-- --job local` or `-- --job kind` for one). Needs act (`ATTESTORM_ACT`, else `act` on PATH;
// `go install github.com/nektos/act@v0.2.89`). With `--actions <dir>` (or ATTESTORM_ACT_ACTIONS)
// act runs offline from copies of the workflow's actions in that folder, laid out as act's action
// cache (`<owner>-<repo>@<ref>/`, a git clone whose origin is the action's GitHub URL and which has
// the ref as a tag); without it act clones them from GitHub. The folder's `tool_cache` is seeded
// with this Node, and for the kind job with kind and kubectl, so setup-node and kind-action download
// nothing. The kind job runs on the Docker engine the environment names, or kind mode's own (started
// and stopped here), with the node image and Node base `attestorm kind up` would use: kind's own
// where they can be pulled, else the ones made here without a registry.
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { chooseNodeImage, engineDown, engineForKind, engineNodeBase, engineUp, ensureKindBinary, KIND_VERSIONS, kindLayout } from '../../src/kind/index.js';
import { buildKubernetes, clusterLayout, onPath } from '../../src/local-cluster/index.js';
import { onCleanup } from '../../src/util/index.js';

const ROOT = join(import.meta.dirname, '../..');
const WORKFLOW = join(ROOT, '.github/workflows/attestorm.yml');
const JOBS = ['local', 'kind'] as const;
type Job = (typeof JOBS)[number];
const log = (s: string) => process.stderr.write(`ci:act: ${s}\n`);

function usage(problem: string): never {
  log(`${problem}\nusage: npm run ci:act -- [--job local|kind] [--actions <act action cache>]`);
  process.exit(2);
}

function options(): { jobs: Job[]; actions: string | null; act: string } {
  const args = process.argv.slice(2);
  let jobs: Job[] = [...JOBS];
  let actions = process.env.ATTESTORM_ACT_ACTIONS || null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--job') {
      const j = args[++i];
      if (!JOBS.includes(j as Job)) usage(`--job must be one of ${JOBS.join(', ')}, got ${j ?? 'nothing'}`);
      jobs = [j as Job];
    } else if (a === '--actions') {
      actions = args[++i] ?? usage('--actions needs a folder');
    } else usage(`unknown argument ${a}`);
  }
  const act = process.env.ATTESTORM_ACT || 'act';
  if (act === 'act' ? !onPath('act') : !existsSync(act))
    usage(`act not found (${act === 'act' ? 'not on PATH' : `ATTESTORM_ACT=${act}`}): GOTOOLCHAIN=local go install github.com/nektos/act@v0.2.89`);
  if (actions && !existsSync(actions)) usage(`--actions ${actions} does not exist`);
  return { jobs, actions, act };
}

/** `owner/repo@ref` of every action a job of the workflow uses (not the repository's own `./`). */
function actionsOf(job: Job): string[] {
  const wf = parse(readFileSync(WORKFLOW, 'utf8')) as { jobs: Record<string, { steps: { uses?: string }[] }> };
  return wf.jobs[job]!.steps.map((s) => s.uses).filter((u): u is string => !!u && !u.startsWith('./'));
}

function missingCopies(actions: string, job: Job): string[] {
  return actionsOf(job).filter((u) => {
    const [repo, ref] = u.split('@') as [string, string];
    return !existsSync(join(actions, `${repo.replace('/', '-')}@${ref}`, '.git'));
  });
}

/** This Node in the tool cache as setup-node looks for it, so `node-version: 20` needs no download. */
function seedNode(toolCache: string): void {
  const version = process.versions.node;
  const dir = join(toolCache, 'node', version, 'x64');
  if (existsSync(`${dir}.complete`)) return;
  const npm = join(dirname(process.execPath), '../lib/node_modules/npm');
  if (!existsSync(npm)) {
    log(`no npm beside ${process.execPath}: setup-node will download Node ${version}`);
    return;
  }
  mkdirSync(join(dir, 'bin'), { recursive: true });
  copyFileSync(process.execPath, join(dir, 'bin/node'));
  cpSync(npm, join(dir, 'lib/node_modules/npm'), { recursive: true, verbatimSymlinks: true });
  for (const [bin, cli] of [
    ['npm', 'npm-cli.js'],
    ['npx', 'npx-cli.js'],
  ] as const)
    writeFileSync(join(dir, 'bin', bin), `#!/bin/sh\nexec "$(dirname "$0")/node" "$(dirname "$0")/../lib/node_modules/npm/bin/${cli}" "$@"\n`, { mode: 0o755 });
  writeFileSync(`${dir}.complete`, '');
  log(`seeded ${dir} (this Node ${version})`);
}

/** kind and kubectl where helm/kind-action looks before downloading them. */
async function seedKind(toolCache: string, kind: string): Promise<void> {
  const dir = join(toolCache, 'kind', KIND_VERSIONS.kind, 'amd64');
  const kubectl = join(clusterLayout().k8sDir, 'bin/kubectl');
  // Built into the shared cache when missing (a fresh machine), as `kind up` builds it.
  await buildKubernetes(clusterLayout(), ['kubectl'], log);
  // ensureKindBinary answers `kind` when the one on PATH is used.
  const kindFile =
    kind === 'kind'
      ? (process.env.PATH ?? '')
          .split(':')
          .map((p) => join(p, 'kind'))
          .find((f) => existsSync(f))!
      : kind;
  for (const [from, to] of [
    [kindFile, join(dir, 'kind/bin/kind')],
    [kubectl, join(dir, 'kubectl/bin/kubectl')],
  ]) {
    mkdirSync(dirname(to!), { recursive: true });
    copyFileSync(from!, to!);
  }
}

async function runAct(act: string, args: string[], env: NodeJS.ProcessEnv, logFile: string): Promise<number> {
  const out = createWriteStream(logFile);
  const child = spawn(act, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const s of [child.stdout, child.stderr]) {
    s.on('data', (b: Buffer) => {
      process.stdout.write(b);
      out.write(b);
    });
  }
  const code = await new Promise<number>((resolve) => child.once('close', (c) => resolve(c ?? 1)));
  await new Promise((r) => out.end(r));
  return code;
}

const { jobs, actions, act } = options();
for (const job of jobs) {
  const missing = actions ? missingCopies(actions, job) : [];
  if (missing.length) usage(`--actions ${actions} has no copy of ${missing.join(', ')} (folder <owner>-<repo>@<ref> with a .git)`);
}
const scratch = mkdtempSync(join(tmpdir(), 'attestorm-act-'));
const l = kindLayout();
let engineStarted = false;
const tearDown = async () => {
  if (engineStarted) {
    log(`engine ${await engineDown(l)}`);
    engineStarted = false;
  }
};
const undo = onCleanup(tearDown);

const event = join(scratch, 'event.json');
writeFileSync(
  event,
  JSON.stringify({
    pull_request: { number: 1, head: { ref: 'change', sha: '0'.repeat(40) }, base: { ref: 'main' } },
    repository: { full_name: 'attestorm/attestorm', name: 'attestorm', owner: { login: 'attestorm' } },
  }),
);
const results: { job: Job; code: number; seconds: number; artifacts: string[] }[] = [];
try {
  for (const job of jobs) {
    const t0 = Date.now();
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: join(scratch, 'xdg') };
    mkdirSync(env.XDG_CONFIG_HOME!, { recursive: true });
    const args = ['pull_request', '-j', job, '-e', event, '-W', WORKFLOW, '-P', 'ubuntu-24.04=-self-hosted'];
    args.push('--artifact-server-path', join(scratch, 'artifacts'), '--artifact-server-addr', '127.0.0.1');
    args.push('--cache-server-path', join(scratch, 'cache'), '--cache-server-addr', '127.0.0.1');
    // The same run id for both jobs; the run attempt tells the runs of one invocation apart.
    args.push('--env', `GITHUB_RUN_ID=${process.pid}`);
    if (actions) {
      args.push('--action-offline-mode', '--action-cache-path', actions);
      seedNode(join(actions, 'tool_cache'));
    }
    if (job === 'kind') {
      let engine: NodeJS.ProcessEnv;
      try {
        engine = await engineForKind(l);
      } catch {
        engineStarted = (await engineUp(l, log)).started;
        engine = await engineForKind(l);
      }
      Object.assign(env, engine.DOCKER_HOST ? { DOCKER_HOST: engine.DOCKER_HOST } : {});
      const kind = await ensureKindBinary(l, log);
      if (actions) await seedKind(join(actions, 'tool_cache'), kind);
      const node = await chooseNodeImage(l, engine, process.env.ATTESTORM_KIND_NODE_IMAGE, log);
      const base = await engineNodeBase(engine, log);
      log(`node image ${node.ref}: ${node.reason}`);
      log(`Node base ${base.ref}: ${base.reason}`);
      args.push('--var', `ATTESTORM_KIND_NODE_IMAGE=${node.ref}`, '--var', `ATTESTORM_IMAGE_BASE=${base.ref}`);
    }
    log(`${act} ${args.join(' ')}`);
    const code = await runAct(act, args, env, join(scratch, `${job}.log`));
    const dir = join(scratch, 'artifacts', String(process.pid));
    const artifacts = existsSync(dir) ? readdirSync(dir).filter((a) => a.includes(`-${job}-`)) : [];
    results.push({ job, code, seconds: Math.round((Date.now() - t0) / 1000), artifacts });
  }
} finally {
  undo();
  await tearDown();
}
for (const r of results)
  log(`job ${r.job}: ${r.code === 0 ? 'succeeded' : `failed (act exit ${r.code})`} in ${r.seconds} s; artifacts: ${r.artifacts.join(', ') || 'none'}`);
log(`logs and artifacts in ${scratch}`);
if (results.every((r) => r.code === 0)) rmSync(join(scratch, 'cache'), { recursive: true, force: true });
process.exit(results.length === jobs.length && results.every((r) => r.code === 0) ? 0 : 1);
