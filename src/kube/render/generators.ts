// The load pods: N storm generator pods, each running the project's pod process that forks M
// workers, and (load.bystanders) the bystander pods — the same process with the bystanders'
// settings, in pods and under labels of their own. They start paused and wait for the runner to
// release them together through the pod proxy; each serves its per-second counts and a final dump
// on GENERATOR_PORT.
import { clusterAgent } from '../cluster-agent.js';
import { bystanderPodName, generatorPodName, type Role } from './names.js';
import { GENERATOR_PORT, meta, PROJECT_UID, type KubeObject, type RenderContext } from './objects.js';
import { baseLabels, projectContainer, serviceAccount, socketMount, socketVolume } from './base.js';
import { loadPlacement } from './topology.js';
import { formatLoadFlags, GENERATOR_FLAGS, type GeneratorLoad } from '../../load/index.js';

export const GENERATOR_SA = 'generator';
/** Bystander pods with `uid: own` run as this uid (group: the image's, which owns its bundle cache). */
export const BYSTANDER_OWN_UID = PROJECT_UID + 1;

// The load flags come from the generator's load options through the table `kind generator` parses them with.
function argv(ctx: RenderContext, load: GeneratorLoad): string[] {
  return ['kind', 'generator', ...formatLoadFlags(GENERATOR_FLAGS, load), '--port', String(GENERATOR_PORT), ...clusterAgent(ctx.variant.kind).generatorArgs];
}

export function generatorArgv(ctx: RenderContext): string[] {
  return argv(ctx, ctx.load.generator);
}

export function bystanderArgv(ctx: RenderContext): string[] | null {
  const b = ctx.load.bystanders;
  return b ? argv(ctx, b.generator) : null;
}

/** One storm or bystander pod (the storm's controller is the runner: it re-applies a churned pod under a new name). */
export function loadPod(ctx: RenderContext, role: Extract<Role, 'generator' | 'bystander'>, name: string): KubeObject {
  const bystander = role === 'bystander';
  const uid = bystander && ctx.load.bystanders?.uid === 'own' ? BYSTANDER_OWN_UID : PROJECT_UID;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta(ctx, name, baseLabels(ctx, { 'attestorm.dev/role': role })),
    spec: {
      // One service account for both: SPIRE's registration entry selects it (each pod still has its own pod selectors).
      serviceAccountName: GENERATOR_SA,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 5,
      ...loadPlacement(ctx, role),
      securityContext: { runAsUser: uid, runAsGroup: PROJECT_UID, runAsNonRoot: true },
      containers: [
        {
          // Ready once every worker has forked and waits for the release.
          ...projectContainer(ctx, { name: 'generator', args: bystander ? bystanderArgv(ctx)! : generatorArgv(ctx), portName: 'stats', port: GENERATOR_PORT }),
          securityContext: { allowPrivilegeEscalation: false },
          volumeMounts: [socketMount(true)],
        },
      ],
      volumes: [socketVolume(ctx)],
    },
  };
}

export function renderGenerators(ctx: RenderContext): KubeObject[] {
  const out: KubeObject[] = [serviceAccount(ctx, GENERATOR_SA)];
  for (let i = 0; i < ctx.load.pods; i++) out.push(loadPod(ctx, 'generator', generatorPodName(i)));
  for (let i = 0; i < (ctx.load.bystanders?.pods ?? 0); i++) out.push(loadPod(ctx, 'bystander', bystanderPodName(i)));
  return out;
}
