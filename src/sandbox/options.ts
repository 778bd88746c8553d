// The sandbox's and the kubelet emulator's options: one zod schema each, validated before
// anything starts, with defaults filled in so the rest of the sandbox never guesses.
import { isIP } from 'node:net';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { parseOrThrow } from '../util/index.js';
import { latencyModelSchema } from './latency-model.js';

/** Total pods on the emulated node when fillerPods is not given: the kubelet's default max-pods. */
export const DEFAULT_NODE_PODS = 110;

/**
 * Bounds of the pod list's shape. Far above real nodes (max-pods 110 by default, 250 where clouds
 * raise it), and the container count bounds the document: at most 4000 containers, about 20 MiB.
 */
export const POD_LIST_LIMITS = { nodePods: 1000, containersPerPod: 20, terminatedPods: 2000, containers: 4000 } as const;

const LOOPBACK_NAMES = new Set(['localhost', 'ip6-localhost']);

/** True for 127.0.0.0/8, ::1 and localhost: the emulator must never be reachable off the machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  if (LOOPBACK_NAMES.has(h)) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1';
  return false;
}

/** "host:port" or "[v6]:port" split; null when malformed. */
export function splitHostPort(listen: string): { host: string; port: number } | null {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(listen.trim());
  if (!m) return null;
  const port = Number(m[2]);
  if (port > 65535) return null;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

const zListen = z.string().superRefine((v, ctx) => {
  const hp = splitHostPort(v);
  if (!hp) {
    ctx.addIssue({ code: 'custom', message: `must be host:port (e.g. 127.0.0.1:0), got ${JSON.stringify(v)}` });
  } else if (!isLoopbackHost(hp.host)) {
    ctx.addIssue({ code: 'custom', message: `must be a loopback address (127.0.0.0/8, ::1, localhost), got ${JSON.stringify(v)}` });
  }
});

const zNonNegInt = z.number().int().min(0);
// Kubernetes names: DNS-1123 labels (namespaces) and subdomains (service accounts).
const zDnsLabel = z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'must be a DNS-1123 label (lowercase letters, digits, "-", at most 63)');
const zDnsSubdomain = z
  .string()
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a DNS-1123 subdomain (lowercase letters, digits, "-", ".")');
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
const LABEL_KEY = /^([a-z0-9.-]{1,253}\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
// Checked per entry so the message names the offending key (zod's record keys report only the value).
const zLabels = z.record(z.string(), z.string()).superRefine((labels, ctx) => {
  for (const [key, value] of Object.entries(labels)) {
    if (!LABEL_KEY.test(key))
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: `must use a Kubernetes label key ([prefix/]name, 63 chars of [A-Za-z0-9-_.]), got key ${JSON.stringify(key)}`,
      });
    else if (!LABEL_VALUE.test(value))
      ctx.addIssue({ code: 'custom', path: [key], message: `must be a Kubernetes label value (63 chars of [A-Za-z0-9-_.]), got ${JSON.stringify(value)}` });
  }
});

export const kubeletEmulatorOptionsSchema = z.strictObject({
  listen: zListen.default('127.0.0.1:0'),
  tls: z.boolean().default(false),
  token: z
    .string()
    .min(1)
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
    .optional(),
  latencyMs: zNonNegInt.max(600_000).default(0),
  serviceTimeMs: z.number().min(0).max(60_000).default(0),
  /** Answer time on top of latencyMs that grows with the requests in flight and the list's size; absent: none. */
  latencyModel: latencyModelSchema.optional(),
  failureRate: z.number().min(0).max(1).default(0),
  visibilityDelayMs: zNonNegInt.max(3_600_000).default(0),
  fillerPods: zNonNegInt.max(10_000).optional(),
  /** Running pods the node lists, the pod source's included; filler pods make up the rest. Default DEFAULT_NODE_PODS. */
  nodePods: z.number().int().min(1).max(POD_LIST_LIMITS.nodePods).optional(),
  /** Containers of every filler and terminated pod; default: each app's own (one, or a main and a sidecar). */
  containersPerPod: z.number().int().min(1).max(POD_LIST_LIMITS.containersPerPod).optional(),
  /** Pods that ended (Succeeded or Failed) and are still listed, not yet garbage-collected. */
  terminatedPods: zNonNegInt.max(POD_LIST_LIMITS.terminatedPods).default(0),
  nodeName: zDnsSubdomain.default('attestorm-node'),
});

export type KubeletEmulatorOptions = z.input<typeof kubeletEmulatorOptionsSchema>;
export type ResolvedKubeletOptions = z.output<typeof kubeletEmulatorOptionsSchema>;

export const RUN_ID_RE = /^[a-z0-9-]+$/;

export const sandboxOptionsSchema = z.strictObject({
  runId: z.string().min(1).max(100).regex(RUN_ID_RE, 'must match /^[a-z0-9-]+$/'),
  pods: z.number().int().min(1).max(1000),
  cgroupDriver: z.enum(['cgroupfs', 'systemd']).default('cgroupfs'),
  qosClass: z.enum(['besteffort', 'burstable', 'guaranteed']).default('besteffort'),
  namespace: zDnsLabel.default('storm'),
  serviceAccount: zDnsSubdomain.default('storm-worker'),
  labels: zLabels.default({ app: 'storm' }),
  image: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._\-/:]*$/, 'must be an image reference like registry.local/name:tag')
    .default('registry.local/storm-worker:1.0'),
  uidMode: z.enum(['same', 'per-pod']).default('same'),
  podLifetimeMs: z.number().int().min(100).optional(),
  useCgroups: z.enum(['auto', 'always', 'never']).default('auto'),
  kubelet: kubeletEmulatorOptionsSchema.default(kubeletEmulatorOptionsSchema.parse({})),
  // A second group of pods beside the storm's (their own ReplicaSet, labels and service account),
  // listed by the kubelet like the others and never churned.
  bystanders: z
    .strictObject({
      pods: z.number().int('must be a positive integer').min(1, 'must be a positive integer').max(100, 'must be at most 100'),
      uid: z.enum(['same', 'own']).default('same'),
    })
    .optional(),
});

export type SandboxOptions = z.input<typeof sandboxOptionsSchema>;
export type ResolvedSandboxOptions = z.output<typeof sandboxOptionsSchema>;

/** First OS uid/gid of per-pod uid mode: pod i runs as 20000+i. */
export const PER_POD_UID_BASE = 20000;
/** First OS uid/gid of bystander pods with uid "own": bystander pod i runs as 30000+i. */
export const BYSTANDER_UID_BASE = 30000;
export const UID_BASES = { perPod: PER_POD_UID_BASE, bystander: BYSTANDER_UID_BASE } as const;

/** Validates sandbox options (ConfigError naming each bad path and its rule). */
export function parseSandboxOptions(input: unknown): ResolvedSandboxOptions {
  const opts = parseOrThrow(sandboxOptionsSchema, input, 'sandbox');
  if (opts.uidMode === 'per-pod' && typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new ConfigError(`sandbox.uidMode "per-pod" needs root (pods run as uid ${PER_POD_UID_BASE}+i), got uid ${process.getuid()}`);
  }
  if (opts.bystanders?.uid === 'own' && typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new ConfigError(`sandbox.bystanders.uid "own" needs root (bystander pods run as uid ${BYSTANDER_UID_BASE}+i), got uid ${process.getuid()}`);
  }
  return opts;
}

export function parseKubeletOptions(input: unknown): ResolvedKubeletOptions {
  return parseOrThrow(kubeletEmulatorOptionsSchema, input, 'kubelet');
}
