// Names and labels of everything kind mode creates. Every object carries the managed-by label, so
// leftovers of killed runs are found (and removed) by label alone.
import { createHash } from 'node:crypto';

export const MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGER = 'attestorm';
export const RUN_LABEL = 'attestorm.dev/run';
export const VARIANT_LABEL = 'attestorm.dev/variant';
export const ROLE_LABEL = 'attestorm.dev/role';
/** Field manager of every server-side apply. */
export const FIELD_MANAGER = 'attestorm';
/** Selects everything attestorm created, in any run. */
export const MANAGED_SELECTOR = `${MANAGED_BY}=${MANAGER}`;

export type Role = 'agent' | 'spire-server' | 'generator' | 'bystander' | 'memory-sampler' | 'filler';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isDns1123Label(s: string): boolean {
  return s.length <= 63 && DNS1123_LABEL.test(s);
}

export function isDns1123Subdomain(s: string): boolean {
  return s.length <= 253 && DNS1123_SUBDOMAIN.test(s);
}

/** A label value: ≤ 63 characters, alphanumerics with -_. inside. */
export function isLabelValue(s: string): boolean {
  return s === '' || (s.length <= 63 && /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/.test(s));
}

/** Lowercases, replaces what DNS-1123 forbids, and shortens with a hash suffix past `max`. */
export function dnsLabel(raw: string, max = 63): string {
  let s = raw
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .replace(/-{2,}/g, '-');
  if (!s) s = 'x';
  if (s.length > max) {
    const hash = createHash('sha256').update(raw).digest('hex').slice(0, 6);
    s = `${s.slice(0, max - 7).replace(/-+$/, '')}-${hash}`;
  }
  return s;
}

/** The namespace of one variant run: `atst-<run>-<variant>-r<rep>`, shortened to a DNS label. */
export function namespaceName(runId: string, variant: string, rep: number): string {
  return dnsLabel(`atst-${runId}-${variant}-r${rep}`);
}

export function labels(runId: string, variant: string, extra: Record<string, string> = {}): Record<string, string> {
  return { [MANAGED_BY]: MANAGER, [RUN_LABEL]: dnsLabel(runId), [VARIANT_LABEL]: dnsLabel(variant), ...extra };
}

/** Cluster-scoped objects (ClusterRoles, bindings) carry the namespace in their name: runs never collide. */
export function clusterScopedName(namespace: string, what: string): string {
  return dnsLabel(`${namespace}-${what}`, 253);
}

export function generatorPodName(i: number): string {
  return `generator-${i}`;
}

export function bystanderPodName(i: number): string {
  return `bystander-${i}`;
}
