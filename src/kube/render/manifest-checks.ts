// Checks the OpenAPI schemas do not make: unknown fields (a misspelled `hostPid` is silently
// dropped by the API server), DNS-1123 names, labels, the shared socket hostPath, and memory
// requests = limits = the variant's limit. Run on every render and before every apply.
import * as k8s from '@kubernetes/client-node';
import { isDns1123Label, isDns1123Subdomain, isLabelValue, MANAGED_BY, MANAGER } from './names.js';
import { quantityBytes, type KubeObject, type RenderContext } from './objects.js';
import { hostSocketDir } from './base.js';
import { SOCKET_DIR } from './variant.js';

type AttributeMap = Array<{ baseName: string; type: string }>;
const models = k8s as unknown as Record<string, { getAttributeTypeMap?: () => AttributeMap } | undefined>;

function attributeMap(type: string): AttributeMap | null {
  const cls = models[type];
  return typeof cls?.getAttributeTypeMap === 'function' ? cls.getAttributeTypeMap() : null;
}

/** Walks a value against client-node's generated model of the API type; reports keys the type lacks. */
function unknownFields(value: unknown, type: string, path: string, out: string[]): void {
  if (value === null || value === undefined) return;
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (Array.isArray(value)) value.forEach((v, i) => unknownFields(v, array[1]!, `${path}[${i}]`, out));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (typeof value === 'object') for (const [k, v] of Object.entries(value)) unknownFields(v, map[1]!, `${path}.${k}`, out);
    return;
  }
  const attrs = attributeMap(type);
  if (!attrs || typeof value !== 'object' || Array.isArray(value)) return;
  const known = new Map(attrs.map((a) => [a.baseName, a.type]));
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const t = known.get(k);
    if (t === undefined) {
      const hint = [...known.keys()].find((n) => n.toLowerCase() === k.toLowerCase());
      out.push(`${path}.${k} is not a field of ${type}${hint ? ` (did you mean ${hint}?)` : ''}`);
    } else unknownFields(v, t, `${path}.${k}`, out);
  }
}

function modelType(o: KubeObject): string {
  const version = o.apiVersion.split('/').pop()!;
  return `${version.charAt(0).toUpperCase()}${version.slice(1)}${o.kind}`;
}

function podSpecOf(o: KubeObject): k8s.V1PodSpec | null {
  if (o.kind === 'Pod') return (o.spec as k8s.V1PodSpec | undefined) ?? null;
  if (o.kind === 'DaemonSet' || o.kind === 'Deployment') return (o.spec as k8s.V1DaemonSetSpec | undefined)?.template?.spec ?? null;
  return null;
}

function where(o: KubeObject): string {
  return `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
}

/** Every problem of a rendered variant, each naming the object and the rule; empty when fine. */
export function manifestProblems(objects: KubeObject[], ctx: RenderContext): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const o of objects) {
    const w = where(o);
    const type = modelType(o);
    if (!attributeMap(type)) out.push(`${w}: ${o.apiVersion} ${o.kind} is not a type the client knows`);
    else unknownFields(o, type, w, out);
    const name = o.metadata.name;
    const asLabel = o.kind === 'Namespace' || o.kind === 'Service' || o.kind === 'Pod';
    if (!(asLabel ? isDns1123Label(name) : isDns1123Subdomain(name)))
      out.push(`${w}: metadata.name must be a DNS-1123 ${asLabel ? 'label' : 'subdomain'}, got "${name}"`);
    if (o.kind !== 'Namespace' && !o.kind.startsWith('Cluster') && o.metadata.namespace !== ctx.namespace) {
      out.push(`${w}: metadata.namespace must be the run's namespace ${ctx.namespace}, got ${o.metadata.namespace ?? 'none'}`);
    }
    const key = `${o.kind}/${o.metadata.namespace ?? ''}/${name}`;
    if (seen.has(key)) out.push(`${w}: rendered twice`);
    seen.add(key);
    for (const [k, v] of Object.entries(o.metadata.labels ?? {}))
      if (!isLabelValue(v)) out.push(`${w}: label ${k} must be a label value (≤ 63, alphanumeric ends), got "${v}"`);
    if (o.metadata.labels?.[MANAGED_BY] !== MANAGER) out.push(`${w}: must carry ${MANAGED_BY}=${MANAGER} (cleanup finds leftovers by it)`);
    const spec = podSpecOf(o);
    // The agent and the load pods share the socket directory; spire-server does not touch it.
    const role = o.metadata.labels?.['attestorm.dev/role'];
    if (spec && (role === 'agent' || role === 'generator' || role === 'bystander')) checkPod(o, spec, ctx, out);
  }
  if (!objects.some((o) => o.kind === 'DaemonSet' && o.metadata.name === 'agent')) out.push('no agent DaemonSet rendered');
  return out;
}

function checkPod(o: KubeObject, spec: k8s.V1PodSpec, ctx: RenderContext, out: string[]): void {
  const w = where(o);
  const socket = (spec.volumes ?? []).find((v) => v.name === 'agent-socket');
  if (!socket) out.push(`${w}: must mount the shared socket directory (volume agent-socket)`);
  else if (socket.hostPath?.path !== hostSocketDir(ctx) || socket.hostPath?.type !== 'DirectoryOrCreate') {
    out.push(`${w}: volume agent-socket must be hostPath ${hostSocketDir(ctx)} (DirectoryOrCreate), got ${JSON.stringify(socket.hostPath ?? socket)}`);
  }
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    const m = (c.volumeMounts ?? []).find((v) => v.name === 'agent-socket');
    if (socket && (!m || m.mountPath !== SOCKET_DIR)) out.push(`${w}: container ${c.name} must mount agent-socket at ${SOCKET_DIR}`);
  }
  const isAgent = o.kind === 'DaemonSet' && o.metadata.name === 'agent';
  if (!isAgent) return;
  if (spec.hostPID !== true) out.push(`${w}: the agent must run with hostPID: true (it reads its callers' /proc)`);
  const c = (spec.containers ?? [])[0];
  const limit = quantityBytes(c?.resources?.limits?.memory ?? '');
  const request = quantityBytes(c?.resources?.requests?.memory ?? '');
  if (limit !== ctx.variant.memoryLimitBytes) {
    out.push(`${w}: resources.limits.memory must be the variant's memory limit ${ctx.variant.memoryLimitBytes} bytes, got ${c?.resources?.limits?.memory}`);
  }
  if (request !== limit) out.push(`${w}: resources.requests.memory must equal limits.memory, got ${c?.resources?.requests?.memory}`);
}
