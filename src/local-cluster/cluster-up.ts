// `cluster up`: check the host, clean what an earlier cluster left, build what the cache lacks,
// make the images, write PKI and configs, then start containerd, etcd, the API server, the
// controller-manager, the scheduler and the kubelet in that order, each waited for; import the
// images and wait for the node to be Ready. Any failure tears down what was started.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PlatformError } from '../errors.js';
import { onCleanup } from '../util/index.js';
import { buildMissing, missingBinaries } from './build.js';
import { hostProblems, onPath, type HostProbe } from './checks.js';
import { httpsGet, startDaemon, waitFor, type TlsClient } from './daemons.js';
import { readListeningPorts, parseChains } from './host-state.js';
import { importImage, pauseArchive, projectArchive, projectImageKey } from './images.js';
import { CONTEXT_NAME, PAUSE_IMAGE, PORTS, PROJECT_IMAGE, VERSIONS, clusterLayout, type ClusterLayout } from './layout.js';
import { makeClusterPki } from './certs.js';
import { ensureSpireImages, spireBinDirProblems } from './spire-images.js';
import { cniConfig, containerdConfig, daemonSpecs, kubeconfig, kubeletConfig } from './render-config.js';
import { sh } from './sh.js';
import { isOurs, readState, writeState, type ClusterState } from './state.js';
import { readSysctls } from './sysctl.js';
import { anythingLeft, describeLeftovers, findLeftovers, leftoverCount, teardownCluster } from './teardown.js';

export interface UpOptions {
  /** Build and import the project's image (default true). */
  projectImage?: boolean;
  log?: (s: string) => void;
  layout?: ClusterLayout;
}

export interface UpResult {
  kubeconfig: string;
  context: string;
  seconds: number;
  built: string[];
  images: string[];
}

function probeHost(): HostProbe {
  let goVersion: string | null = null;
  if (onPath('go')) {
    try {
      goVersion = execFileSync('go', ['version'], { encoding: 'utf8', env: { ...process.env, GOTOOLCHAIN: 'local' } }).trim();
    } catch {
      goVersion = null;
    }
  }
  return { platform: process.platform, uid: process.getuid?.() ?? -1, has: (t) => onPath(t), exists: existsSync, listening: readListeningPorts(), goVersion };
}

async function chains(tool: string): Promise<string[]> {
  const r = await sh(tool, [], { allowFail: true }).catch(() => null);
  return r && r.code === 0 ? parseChains(r.stdout) : [];
}

function writeFiles(l: ClusterLayout, pki: Awaited<ReturnType<typeof makeClusterPki>>): TlsClient {
  mkdirSync(l.certsDir, { recursive: true, mode: 0o700 });
  for (const [name, pair] of Object.entries(pki)) {
    writeFileSync(join(l.certsDir, name === 'sa' ? 'sa.pub' : `${name}.crt`), pair.certPem);
    writeFileSync(join(l.certsDir, `${name}.key`), pair.keyPem, { mode: 0o600 });
  }
  const ca = pki.ca!.certPem;
  writeFileSync(l.kubeconfig, kubeconfig(ca, { name: 'attestorm-admin', ...pki.admin! }), { mode: 0o600 });
  writeFileSync(join(l.stateDir, 'controller-manager.kubeconfig'), kubeconfig(ca, { name: 'system:kube-controller-manager', ...pki['controller-manager']! }), {
    mode: 0o600,
  });
  writeFileSync(join(l.stateDir, 'scheduler.kubeconfig'), kubeconfig(ca, { name: 'system:kube-scheduler', ...pki.scheduler! }), { mode: 0o600 });
  writeFileSync(join(l.stateDir, 'kubelet.kubeconfig'), kubeconfig(ca, { name: `system:node:${l.nodeName}`, ...pki['kubelet-client']! }), { mode: 0o600 });
  writeFileSync(l.containerdConfig, containerdConfig(l));
  mkdirSync(l.cniConfDir, { recursive: true });
  writeFileSync(join(l.cniConfDir, '10-attestorm.conflist'), cniConfig(l));
  writeFileSync(join(l.stateDir, 'kubelet.yaml'), kubeletConfig(l));
  // Pods get a resolv.conf; there is no cluster DNS and no route out, so it names loopback only.
  writeFileSync(join(l.stateDir, 'resolv.conf'), 'nameserver 127.0.0.1\n');
  return { ca, cert: pki.admin!.certPem, key: pki.admin!.keyPem };
}

/**
 * Everything checked before anything starts: no cluster of ours running, the ports free, an
 * earlier cluster's leftovers cleaned, the host able to run one. Returns SPIRE_BIN_DIR when set.
 */
async function checkCanStart(l: ClusterLayout, withProject: boolean, log: (s: string) => void): Promise<string | null> {
  const earlier = readState(l.stateFile);
  const running = earlier?.daemons.filter((d) => isOurs(d)) ?? [];
  if (running.length) {
    throw new PlatformError(
      `a cluster is already running (started ${earlier!.startedAt}: ${running.map((d) => `${d.name} pid ${d.pid}`).join(', ')}): use it (KUBECONFIG=${earlier!.kubeconfig}, context ${earlier!.context}), or stop it with \`attestorm cluster down\``,
    );
  }
  // A port in use may be another cluster's (another state folder): its pods and bridge look like
  // leftovers, so nothing is cleaned then — the ports are named instead.
  const busy = Object.entries(PORTS).filter(([, port]) => readListeningPorts().has(port));
  if (busy.length) {
    throw new PlatformError(
      `cannot start the local cluster: port(s) in use: ${busy.map(([what, port]) => `${port} (${what})`).join(', ')}. Stop what listens there (ss -ltnp), or \`attestorm cluster down\` if it is an earlier cluster`,
    );
  }
  if (process.getuid?.() === 0 && (await anythingLeft(l))) {
    const before = describeLeftovers(await findLeftovers(l));
    log(`cleaning what an earlier cluster left${before.length ? ` (${before.join('; ')})` : ''}`);
    const left = await teardownCluster(l, log);
    if (leftoverCount(left))
      throw new PlatformError(
        `an earlier cluster left things that could not be removed: ${describeLeftovers(left).join('; ')}. Try \`attestorm cluster down\`, or remove them by hand`,
      );
  }

  const pauseCached = existsSync(join(l.imagesDir, `pause-${PAUSE_IMAGE.split(':').pop()}.tar`));
  const baseCached = existsSync(join(l.imagesDir, `node-base-${VERSIONS.node}.tar`));
  const projectCached = existsSync(join(l.imagesDir, `attestorm-${projectImageKey()}.tar`));
  const problems = hostProblems(probeHost(), {
    build: missingBinaries(l).length > 0,
    pauseImage: !pauseCached,
    baseImage: withProject && !projectCached && !baseCached,
    projectImage: withProject && !projectCached,
  });
  // With SPIRE_BIN_DIR, the SPIRE images are made from those binaries and imported too (runs make them otherwise).
  const spireDir = process.env.SPIRE_BIN_DIR || null;
  if (spireDir) problems.push(...spireBinDirProblems(spireDir, 'SPIRE_BIN_DIR'));
  if (problems.length) throw new PlatformError(`cannot start the local cluster:\n  - ${problems.join('\n  - ')}`);
  return spireDir;
}

/** The daemons in order, each waited for, the images imported once containerd answers; returns the images. */
async function startDaemons(
  l: ClusterLayout,
  state: ClusterState,
  archives: { pause: string; project: string | null; spireDir: string | null },
  log: (s: string) => void,
): Promise<string[]> {
  const tls = writeFiles(l, await makeClusterPki(l.nodeName));
  const specs = daemonSpecs(l);
  const start = async (name: string) => {
    const d = await startDaemon(
      specs.find((s) => s.name === name)!,
      l.logsDir,
    );
    state.daemons.push(d);
    writeState(l.stateFile, state);
    return { d, alive: () => isOurs(d) };
  };
  const api = (path: string) => httpsGet(`https://127.0.0.1:${PORTS.apiServer}${path}`, tls);

  const containerd = await start('containerd');
  await waitFor(
    'containerd answering',
    async () => ((await sh('ctr', ['--address', l.containerdSocket, 'version'], { allowFail: true })).code === 0 ? true : null),
    30_000,
    containerd.alive,
    containerd.d.log,
  );
  const images = [PAUSE_IMAGE, ...(archives.project ? [PROJECT_IMAGE] : [])];
  await importImage(l, archives.pause, PAUSE_IMAGE);
  if (archives.project) await importImage(l, archives.project, PROJECT_IMAGE);
  if (archives.spireDir) {
    const spire = await ensureSpireImages(l, archives.spireDir, log);
    images.push(spire.serverImage, spire.agentImage);
  }
  log(`imported ${images.join(', ')}`);

  const etcd = await start('etcd');
  await waitFor(
    'etcd healthy',
    async () => {
      const r = await fetch(`http://127.0.0.1:${PORTS.etcdClient}/health`);
      return r.ok ? true : null;
    },
    30_000,
    etcd.alive,
    etcd.d.log,
  );
  const apiServer = await start('kube-apiserver');
  await waitFor('kube-apiserver ready', async () => ((await api('/readyz')).status === 200 ? true : null), 90_000, apiServer.alive, apiServer.d.log);
  await start('kube-controller-manager');
  await start('kube-scheduler');
  const kubelet = await start('kubelet');
  await waitFor(
    `node ${l.nodeName} Ready`,
    async () => {
      const r = await api(`/api/v1/nodes/${l.nodeName}`);
      if (r.status !== 200) return null;
      const node = JSON.parse(r.body) as { status?: { conditions?: Array<{ type: string; status: string }> } };
      return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : null;
    },
    120_000,
    kubelet.alive,
    kubelet.d.log,
  );
  // Pods in a new namespace need its default service account, which the controller-manager makes.
  await waitFor(
    'default service account',
    async () => ((await api('/api/v1/namespaces/default/serviceaccounts/default')).status === 200 ? true : null),
    60_000,
    () => true,
    kubelet.d.log,
  );
  for (const d of state.daemons) if (!isOurs(d)) throw new PlatformError(`${d.name} exited during start-up; its log ${d.log}`);
  return images;
}

export async function clusterUp(opts: UpOptions = {}): Promise<UpResult> {
  const t0 = Date.now();
  const log = opts.log ?? ((s: string) => process.stderr.write(`attestorm cluster: ${s}\n`));
  const l = opts.layout ?? clusterLayout();
  const withProject = opts.projectImage ?? true;
  const spireDir = await checkCanStart(l, withProject, log);

  const built = await buildMissing(l, log);
  const pause = await pauseArchive(l, log);
  const project = withProject ? await projectArchive(l, log) : null;

  // From here on, whatever fails or interrupts us tears the cluster down again.
  let started = false;
  const undo = onCleanup(async () => {
    if (!started) {
      log('interrupted: tearing down what was started');
      await teardownCluster(l, log);
    }
  });
  try {
    mkdirSync(l.stateDir, { recursive: true });
    mkdirSync(l.runDir, { recursive: true });
    const state: ClusterState = {
      version: 1,
      startedAt: new Date().toISOString(),
      nodeName: l.nodeName,
      kubeconfig: l.kubeconfig,
      context: CONTEXT_NAME,
      daemons: [],
      sysctls: readSysctls(),
      firewallChains: { v4: await chains('iptables-save'), v6: await chains('ip6tables-save') },
    };
    writeState(l.stateFile, state);
    const images = await startDaemons(l, state, { pause, project, spireDir }, log);
    state.ready = true;
    writeState(l.stateFile, state);
    started = true;
    return { kubeconfig: l.kubeconfig, context: CONTEXT_NAME, seconds: (Date.now() - t0) / 1000, built, images };
  } catch (err) {
    log(`start-up failed: ${(err as Error).message.split('\n')[0]}; tearing down`);
    const left = await teardownCluster(l, log);
    if (leftoverCount(left)) log(`could not remove: ${describeLeftovers(left).join('; ')}`);
    throw err;
  } finally {
    undo();
  }
}
