// The storm: N generator pods, each running the project's pod process that forks M workers. They
// start paused and wait for the runner to release them together through the pod proxy; each
// serves its per-second counts and a final dump on GENERATOR_PORT.
import { generatorPodName } from './names.js';
import { GENERATOR_PORT, meta, PROJECT_CLI, PROJECT_UID, type KubeObject, type RenderContext } from './objects.js';
import { baseLabels, nodePlacement, serviceAccount, socketMount, socketVolume } from './render-base.js';
import { SOCKET_DIR, SOCKET_FILE } from './variant.js';

export const GENERATOR_SA = 'generator';

export function generatorArgv(ctx: RenderContext): string[] {
  return [
    'kind',
    'generator',
    '--socket',
    `${SOCKET_DIR}/${SOCKET_FILE}`,
    '--workers',
    String(ctx.load.workersPerPod),
    '--port',
    String(GENERATOR_PORT),
    ...ctx.load.generatorArgs,
    // SPIRE: ready only once an SVID was fetched (the registration entry reaches the agent in ~10 s).
    ...(ctx.variant.kind === 'spire' ? ['--probe-timeout', '120s'] : []),
  ];
}

export function renderGenerators(ctx: RenderContext): KubeObject[] {
  const out: KubeObject[] = [serviceAccount(ctx, GENERATOR_SA)];
  for (let i = 0; i < ctx.load.pods; i++) {
    const l = baseLabels(ctx, { 'attestorm.dev/role': 'generator' });
    out.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta(ctx, generatorPodName(i), l),
      spec: {
        serviceAccountName: GENERATOR_SA,
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 5,
        ...nodePlacement(ctx),
        securityContext: { runAsUser: PROJECT_UID, runAsGroup: PROJECT_UID, runAsNonRoot: true },
        containers: [
          {
            name: 'generator',
            image: ctx.images.project,
            imagePullPolicy: 'IfNotPresent',
            command: ['node', PROJECT_CLI],
            args: generatorArgv(ctx),
            ports: [{ name: 'stats', containerPort: GENERATOR_PORT }],
            // Ready once every worker has forked and waits for the release.
            readinessProbe: { httpGet: { path: '/ready', port: GENERATOR_PORT }, periodSeconds: 1 },
            securityContext: { allowPrivilegeEscalation: false },
            volumeMounts: [socketMount(true)],
          },
        ],
        volumes: [socketVolume(ctx)],
      },
    });
  }
  return out;
}
