// `attestorm kind`: render a scenario's manifests, create/delete a kind cluster, remove leftovers
// from a cluster, and (inside generator pods) run one generator pod's processes.
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { ConfigError } from '../errors.js';
import { GENERATOR_FLAGS, generatorLoadFromFlags } from '../load/index.js';
import { readScenarioFile } from '../scenario/index.js';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { engineDown, engineForKind, engineUp, ensureKindBinary, kindClusterUp, kindLayout, kindNodeContainer } from '../kind/index.js';
import { cleanupCluster, DEFAULT_KIND_CLUSTER, loadKubeConfig, parseClusterTarget } from '../platform/cluster/index.js';
import { DEFAULT_IMAGES, renderScenario, startGenerator, startMemorySampler, toYaml, writeRendered } from '../kube/index.js';
import { kindDown } from '../kind/index.js';
import { parseDurationMs } from '../util/index.js';

const nameOption = { type: 'string', default: DEFAULT_KIND_CLUSTER, describe: 'kind cluster name' } as const;

function checkName(name: string): string {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name))
    throw new ConfigError(`--name must be a kind cluster name (lowercase letters, digits, "-"), got "${name}"`);
  return name;
}

interface RenderArgs {
  scenario: string;
  out?: string;
  spire: boolean;
  image: string;
  'spire-tag': string;
  'cluster-name': string;
  'run-id': string;
  'memory-sampler': boolean;
}

const renderCommand: CommandModule<object, RenderArgs> = {
  command: 'render <scenario>',
  describe: 'Write the manifests a kind run would apply, one YAML file per variant (no cluster needed)',
  builder: (y: Argv) =>
    y
      .positional('scenario', { type: 'string', demandOption: true, describe: 'Scenario YAML file' })
      .option('out', { type: 'string', describe: 'Directory for <variant>.yaml files; default: print to stdout' })
      .option('spire', { type: 'boolean', default: false, describe: 'Add a variant with real spire-server and spire-agent' })
      .option('image', { type: 'string', default: DEFAULT_IMAGES.project, describe: "The project's image (reference agent, generators)" })
      .option('spire-tag', {
        type: 'string',
        default: DEFAULT_IMAGES.spireAgent.split(':').pop()!,
        describe: 'Tag of ghcr.io/spiffe/spire-server and spire-agent (no leading v)',
      })
      .option('cluster-name', { type: 'string', default: DEFAULT_KIND_CLUSTER, describe: "Cluster name for spire-server's k8s_psat" })
      .option('run-id', { type: 'string', default: 'render', describe: 'Run id used in namespace names' })
      .option('memory-sampler', {
        type: 'boolean',
        default: false,
        describe: "Add the memory-sampler pod (what a --context run applies: the agent's memory read on its node)",
      })
      .example('$0 kind render scenarios/quick.yaml --out manifests/quick', 'one file per placement')
      .example('$0 kind render scenarios/quick.yaml --spire --spire-tag 1.13.3', 'with a SPIRE variant, to stdout') as Argv<RenderArgs>,
  handler: async (args: ArgumentsCamelCase<RenderArgs>) => {
    const tag = args['spire-tag'];
    if (!/^[0-9A-Za-z][0-9A-Za-z._-]*$/.test(tag) || tag.startsWith('v'))
      throw new ConfigError(`--spire-tag must be an image tag without a leading v (e.g. 1.13.3), got "${tag}"`);
    const { scenario } = readScenarioFile(args.scenario);
    const rendered = renderScenario(scenario, {
      runId: args['run-id'],
      withSpire: args.spire,
      clusterName: args['cluster-name'],
      memorySampler: args['memory-sampler'],
      images: { project: args.image, spireServer: `ghcr.io/spiffe/spire-server:${tag}`, spireAgent: `ghcr.io/spiffe/spire-agent:${tag}` },
    });
    if (!args.out) {
      for (const r of rendered) process.stdout.write(`# variant ${r.variant.name}\n${toYaml(r.objects)}`);
      return;
    }
    for (const f of writeRendered(rendered, args.out)) process.stdout.write(`${f}\n`);
  },
};

interface NameArgs {
  name: string;
}

interface UpArgs extends NameArgs {
  nodes: number;
  'node-image'?: string;
  'project-image': boolean;
}

const log = (s: string) => process.stderr.write(`attestorm kind: ${s}\n`);

const upCommand: CommandModule<object, UpArgs> = {
  command: 'up',
  describe: "Create a kind cluster for kind mode: kind's node image where it can be pulled and runs, else one built here without a registry",
  builder: (y: Argv) =>
    y
      .option('name', nameOption)
      .option('nodes', { type: 'number', default: 1, describe: 'Nodes in all: a control plane, the rest workers (1-9)' })
      .option('node-image', { type: 'string', describe: 'Node image to use (default: kindest/node where it can be pulled and runs, else the local one)' })
      .option('project-image', {
        type: 'boolean',
        default: true,
        describe: "Build the project's image as `cluster up` does (buildah, no registry) and kind-load it (--no-project-image to skip)",
      })
      .example('$0 kind up', 'create cluster "attestorm" (context kind-attestorm)')
      .example('$0 kind up --name three --nodes 3', 'a control plane and two workers')
      .epilog(
        'Needs a Docker engine (DOCKER_HOST, the default socket, or `attestorm kind engine up`). Cache: $ATTESTORM_KIND_CACHE (default /var/cache/attestorm/kind) for kind and the node image, $ATTESTORM_CLUSTER_CACHE for the Kubernetes binaries.',
      ) as Argv<UpArgs>,
  handler: async (args: ArgumentsCamelCase<UpArgs>) => {
    if (!Number.isInteger(args.nodes) || args.nodes < 1 || args.nodes > 9) throw new ConfigError(`--nodes must be an integer from 1 to 9, got ${args.nodes}`);
    const r = await kindClusterUp(kindLayout(), {
      name: checkName(args.name),
      nodes: args.nodes,
      projectImage: args['project-image'],
      log,
      ...(args['node-image'] ? { nodeImage: args['node-image'] } : {}),
    });
    log(`up in ${r.seconds.toFixed(1)} s (${args.nodes} node${args.nodes === 1 ? '' : 's'}, ${r.nodeImage})`);
    process.stdout.write(`${r.dockerHost ? `DOCKER_HOST=${r.dockerHost}\n` : ''}context=${r.context}\nnodeImage=${r.nodeImage}\n`);
  },
};

const downCommand: CommandModule<object, NameArgs> = {
  command: 'down',
  describe: 'Delete the kind cluster',
  builder: (y: Argv) => y.option('name', nameOption).example('$0 kind down --name ci', 'delete cluster "ci"') as Argv<NameArgs>,
  handler: async (args: ArgumentsCamelCase<NameArgs>) => {
    const l = kindLayout();
    const name = checkName(args.name);
    const env = await engineForKind(l);
    await kindDown(name, { kind: await ensureKindBinary(l, log), env });
  },
};

const engineCommand: CommandModule<object, { action: string }> = {
  command: 'engine <action>',
  describe: "kind mode's own Docker engine (Debian's dockerd; data outside the clone): up prints its DOCKER_HOST, down stops it and its containers",
  builder: (y: Argv) =>
    y
      .positional('action', { choices: ['up', 'down'] as const, demandOption: true, describe: 'up or down' })
      .example('$0 kind engine up', 'then: DOCKER_HOST=<printed> attestorm kind up')
      .epilog(
        'Data root $ATTESTORM_DOCKER_STATE (default /var/lib/attestorm/docker), socket under $ATTESTORM_DOCKER_RUN (default /run/attestorm-docker).',
      ) as Argv<{
      action: string;
    }>,
  handler: async (args) => {
    const l = kindLayout();
    if (args.action === 'up') {
      const r = await engineUp(l, log);
      log(r.started ? 'engine started' : 'engine already running');
      process.stdout.write(`DOCKER_HOST=${r.dockerHost}\n`);
    } else {
      log(`engine ${await engineDown(l)}`);
    }
  },
};

interface CleanupArgs {
  cluster?: string;
  context?: string;
  kubeconfig?: string;
  'dry-run': boolean;
}

/** The cluster's nodes whose kind node container no longer runs; none when no engine answers (then NotReady says it, later). */
async function goneKindNodes(kc: KubeConfig): Promise<string[]> {
  const env = await engineForKind(kindLayout()).catch(() => null);
  if (!env) return [];
  const nodes = (await kc.makeApiClient(CoreV1Api).listNode()).items.map((n) => n.metadata!.name!);
  const states = await Promise.all(nodes.map((n) => kindNodeContainer(n, env)));
  return nodes.filter((_, i) => !states[i]!.running);
}

const cleanupCommand: CommandModule<object, CleanupArgs> = {
  command: 'cleanup',
  describe: 'Remove what kind runs left in a cluster (namespaces, ClusterRoles, bindings labelled app.kubernetes.io/managed-by=attestorm)',
  builder: (y: Argv) =>
    y
      .option('cluster', { type: 'string', describe: 'kind[:<name>] (default kind:attestorm)' })
      .option('context', { type: 'string', describe: 'A kubeconfig context instead of a kind cluster' })
      .option('kubeconfig', { type: 'string', describe: 'Kubeconfig file (default: KUBECONFIG or ~/.kube/config)' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'List, remove nothing' })
      .example('$0 kind cleanup --cluster kind:ci --dry-run', 'list leftovers in cluster "ci"') as Argv<CleanupArgs>,
  handler: async (args: ArgumentsCamelCase<CleanupArgs>) => {
    const target = parseClusterTarget({ cluster: args.cluster, context: args.context });
    const kc = loadKubeConfig(target, args.kubeconfig);
    // kind: nodes whose container is gone (removed, stopped) are known at once, before their Node turns NotReady.
    const lostNodes = target.kindName ? await goneKindNodes(kc) : [];
    const found = await cleanupCluster(kc, { dryRun: args['dry-run'], lostNodes });
    for (const f of found) process.stdout.write(`${args['dry-run'] ? 'would delete' : 'deleted'} ${f}\n`);
    process.stderr.write(found.length ? `attestorm kind cleanup: ${found.length} object(s)\n` : 'attestorm kind cleanup: nothing left behind\n');
  },
};

type GeneratorArgs = Record<string, unknown> & { port: number; 'probe-timeout'?: string };

export const generatorCommand: CommandModule<object, GeneratorArgs> = {
  command: 'generator',
  describe: 'Inside a generator pod: fork the workers, wait for the release, serve per-second counts on --port',
  builder: (y: Argv) => {
    // The load flags as `attestorm load` declares them; the renderer writes them from the same table.
    let b = y;
    for (const f of GENERATOR_FLAGS) b = b.option(f.flag, f.option);
    return b.option('port', { type: 'number', default: 9100, describe: 'Port of the stats endpoint' }).option('probe-timeout', {
      type: 'string',
      describe: 'Report ready only after a FetchJWTSVID succeeded, trying this long (e.g. 120s)',
    }) as unknown as Argv<GeneratorArgs>;
  },
  handler: async (args: ArgumentsCamelCase<GeneratorArgs>) => {
    const load = generatorLoadFromFlags(args);
    const probeMs = args['probe-timeout'] === undefined ? null : parseDurationMs(args['probe-timeout']);
    if (probeMs === null && args['probe-timeout'] !== undefined)
      throw new ConfigError(`--probe-timeout must be a duration like 120s, got "${args['probe-timeout']}"`);
    const gen = await startGenerator({
      ...(probeMs !== null ? { probe: { timeoutMs: probeMs } } : {}),
      podName: process.env.HOSTNAME ?? 'generator',
      port: args.port,
      load,
    });
    const stop = () => void gen.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    await gen.finished;
    // Serve the final dump until the runner has read it and deletes the namespace (SIGTERM); a
    // runner that never comes back does not keep the pod forever.
    setTimeout(stop, 10 * 60_000).unref();
  },
};

interface MemorySamplerArgs {
  'cgroup-root': string;
  port: number;
}

const memorySamplerCommand: CommandModule<object, MemorySamplerArgs> = {
  command: 'memory-sampler',
  describe: "Inside the memory-sampler pod: read the agent container's memory cgroup every 100 ms, serve the readings on --port",
  builder: (y: Argv) =>
    y
      .option('cgroup-root', { type: 'string', default: '/host/sys/fs/cgroup', describe: "Where the node's /sys/fs/cgroup is mounted" })
      .option('port', { type: 'number', default: 9101, describe: 'Port of the readings endpoint' }) as Argv<MemorySamplerArgs>,
  handler: async (args: ArgumentsCamelCase<MemorySamplerArgs>) => {
    let sampler: Awaited<ReturnType<typeof startMemorySampler>>;
    try {
      sampler = await startMemorySampler({ cgroupRoot: args['cgroup-root'], port: args.port });
    } catch (err) {
      throw new ConfigError(`--cgroup-root ${args['cgroup-root']}: ${(err as Error).message}`);
    }
    const stop = () => void sampler.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    await new Promise(() => {});
  },
};

export const kindCommand: CommandModule = {
  command: 'kind <command>',
  describe: 'Kind mode: render manifests, create/delete a kind cluster, clean up a cluster',
  builder: (y: Argv) =>
    y
      .command(renderCommand)
      .command(upCommand)
      .command(downCommand)
      .command(engineCommand)
      .command(cleanupCommand)
      .command(generatorCommand)
      .command(memorySamplerCommand)
      .demandCommand(1, 'Name a kind command: render, up, down, engine or cleanup.'),
  handler: () => {},
};
