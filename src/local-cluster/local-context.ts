// Whether a kubeconfig context is this host's local cluster (the one `attestorm cluster up` started):
// what decides that SPIRE images are made here rather than pulled.
import { clusterLayout, type ClusterLayout } from './layout.js';
import { readState } from './state.js';

export function isLocalClusterContext(context: string, l: ClusterLayout = clusterLayout()): boolean {
  return readState(l.stateFile)?.context === context;
}
