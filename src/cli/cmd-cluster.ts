// `attestorm cluster up|status|down`: a single-node Kubernetes cluster of real components on this
// Linux host (no kind, no registry), for `attestorm run … --context attestorm-local`.
import type { Argv, CommandModule } from 'yargs';
import { PlatformError } from '../errors.js';
import { clusterLayout, clusterStatus, clusterUp, CONTEXT_NAME, describeLeftovers, leftoverCount, teardownCluster } from '../local-cluster/index.js';

interface UpArgs {
  'project-image': boolean;
}

const upCommand: CommandModule<object, UpArgs> = {
  command: 'up',
  describe: 'Build what the cache lacks, start the cluster, import the images; prints KUBECONFIG and the context',
  builder: (y: Argv) =>
    y
      .option('project-image', {
        type: 'boolean',
        default: true,
        describe: "Build the project's image from the Dockerfile (buildah, local Node base) and import it (--no-project-image to skip)",
      })
      .example('$0 cluster up', `then: KUBECONFIG=<printed path> attestorm run scenarios/ci-kind.yaml --context ${CONTEXT_NAME}`)
      .epilog(
        'Cache: $ATTESTORM_CLUSTER_CACHE (default /var/cache/attestorm/cluster), kept across down. State: $ATTESTORM_CLUSTER_STATE (default /var/lib/attestorm/cluster).',
      ) as Argv<UpArgs>,
  handler: async (args) => {
    const r = await clusterUp({ projectImage: args['project-image'] });
    process.stderr.write(`attestorm cluster: up in ${r.seconds.toFixed(1)} s${r.built.length ? ` (built ${r.built.length} binaries)` : ''}\n`);
    process.stdout.write(`KUBECONFIG=${r.kubeconfig}\ncontext=${r.context}\n`);
  },
};

interface StatusArgs {
  json: boolean;
}

const statusCommand: CommandModule<object, StatusArgs> = {
  command: 'status',
  describe: 'What of the cluster runs: daemons, versions, node readiness, kubeconfig and context, images',
  builder: (y: Argv) => y.option('json', { type: 'boolean', default: false, describe: 'Print the status as JSON' }) as Argv<StatusArgs>,
  handler: async (args) => {
    const s = await clusterStatus();
    if (args.json) {
      process.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
    } else if (!s.daemons.some((d) => d.running)) {
      const crashed = s.daemons.length ? ` (the one started ${s.startedAt} is gone)` : '';
      process.stdout.write(
        `no cluster running${crashed}${s.leftovers.length ? `; left behind: ${s.leftovers.join('; ')} (attestorm cluster down removes it)` : ''}\n`,
      );
    } else {
      const how = !s.ready ? 'partly started (`up` did not finish: `attestorm cluster down`, then up again)' : s.running ? 'running' : 'partly running';
      process.stdout.write(`cluster ${how} since ${s.startedAt}\n`);
      for (const d of s.daemons) process.stdout.write(`  ${d.name.padEnd(24)} pid ${String(d.pid).padEnd(7)} ${d.running ? 'running' : 'not running'}\n`);
      process.stdout.write(
        `  API server ${s.serverVersion ?? 'not answering'}; node ${s.node ? `${s.node.name} ${s.node.ready ? 'Ready' : 'NotReady'} (kubelet ${s.node.kubeletVersion})` : 'not registered'}\n`,
      );
      process.stdout.write(`  images: ${s.images.join(', ') || 'none'}\n`);
      process.stdout.write(`KUBECONFIG=${s.kubeconfig}\ncontext=${s.context}\n`);
    }
    if ((!s.running || !s.ready) && s.daemons.some((d) => d.running)) process.exitCode = 3;
  },
};

const downCommand: CommandModule = {
  command: 'down',
  describe: 'Stop the cluster and remove its processes, mounts, interfaces, cgroups and firewall chains (also after a crash); the build cache stays',
  handler: async () => {
    const left = await teardownCluster(clusterLayout(), (s) => process.stderr.write(`attestorm cluster: ${s}\n`));
    if (leftoverCount(left)) throw new PlatformError(`attestorm cluster down could not remove: ${describeLeftovers(left).join('; ')}`);
    process.stderr.write('attestorm cluster: down, nothing left behind\n');
  },
};

export const clusterCommand: CommandModule = {
  command: 'cluster <command>',
  describe: 'A local single-node Kubernetes cluster of real components (Linux, root; no kind, no registry)',
  builder: (y: Argv) => y.command(upCommand).command(statusCommand).command(downCommand).demandCommand(1, 'Name a cluster command: up, status or down.'),
  handler: () => undefined,
};
