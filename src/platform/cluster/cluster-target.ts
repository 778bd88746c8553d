// Which cluster a run talks to: `--cluster kind[:<name>]` (context kind-<name>) or `--context <ctx>`,
// resolved against the kubeconfig before anything is sent. client-node's loadFromDefault silently
// falls back to http://localhost:8080 when it finds no kubeconfig; that is refused here, by name.
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigError, RunError } from '../../errors.js';

export const DEFAULT_KIND_CLUSTER = 'attestorm';

export interface ClusterTarget {
  /** The kubeconfig context to use. */
  context: string;
  /** Set for kind clusters: the kind cluster name (node container `<name>-control-plane`, k8s_psat cluster name). */
  kindName: string | null;
}

/** Parses `--cluster kind[:<name>]` / `--context <ctx>`; exactly one of them. */
export function parseClusterTarget(opts: { cluster?: string | undefined; context?: string | undefined }): ClusterTarget {
  if (opts.cluster !== undefined && opts.context !== undefined) {
    throw new ConfigError(`--cluster and --context name the cluster twice: use one (got --cluster ${opts.cluster} and --context ${opts.context})`);
  }
  if (opts.context !== undefined) {
    if (!opts.context) throw new ConfigError('--context must name a kubeconfig context, got an empty string');
    return { context: opts.context, kindName: opts.context.startsWith('kind-') ? opts.context.slice(5) : null };
  }
  const m = /^kind(?::([a-z0-9]([-a-z0-9]*[a-z0-9])?))?$/.exec(opts.cluster ?? 'kind');
  if (!m) throw new ConfigError(`--cluster must be kind or kind:<name> (a kind cluster name: lowercase letters, digits, "-"), got "${opts.cluster}"`);
  const name = m[1] ?? DEFAULT_KIND_CLUSTER;
  return { context: `kind-${name}`, kindName: name };
}

/** Where the kubeconfig came from, for error messages. */
function kubeconfigSource(): string {
  return process.env.KUBECONFIG ? `KUBECONFIG=${process.env.KUBECONFIG}` : '~/.kube/config';
}

/**
 * Loads the kubeconfig and selects the target's context. Preflight step "context": fails when no
 * kubeconfig was found (client-node's localhost:8080 fallback) or the context is not in it.
 */
export function loadKubeConfig(target: ClusterTarget, kubeconfigPath?: string): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
    else kc.loadFromDefault();
  } catch (err) {
    throw new RunError(`preflight (context): cannot read the kubeconfig (${kubeconfigPath ?? kubeconfigSource()}): ${(err as Error).message}`, { cause: err });
  }
  const names = kc.getContexts().map((c) => c.name);
  const fallback = kc.getCurrentCluster()?.server === 'http://localhost:8080' && names.length <= 1 && !kubeconfigPath;
  if (fallback || names.length === 0) {
    throw new RunError(
      `preflight (context): no kubeconfig found (${kubeconfigPath ?? kubeconfigSource()}); client-node would talk to http://localhost:8080. ` +
        (target.kindName ? `Create the cluster with \`attestorm kind up --name ${target.kindName}\`` : `Point KUBECONFIG at the cluster's kubeconfig`),
    );
  }
  if (!names.includes(target.context)) {
    throw new RunError(
      `preflight (context): context "${target.context}" is not in the kubeconfig (${kubeconfigPath ?? kubeconfigSource()}; it has ${names.join(', ')}). ` +
        (target.kindName
          ? `Create it with \`attestorm kind up --name ${target.kindName}\` or name another with --context`
          : 'Name one of those with --context'),
    );
  }
  kc.setCurrentContext(target.context);
  return kc;
}
