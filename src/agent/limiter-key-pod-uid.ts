// Limiter key "pod-uid" (the original pre-attestation proposal): the caller's pod UID from its
// cgroup, falling back to its OS UID outside a pod, so one noisy pod cannot drain everyone's bucket.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { keyNeedsAttestation } from '../contract/index.js';
import type { AgentConfig } from './config.js';
import { parseCgroup } from './cgroup-path.js';
import { osUidKey } from './limiter-key-os-uid.js';
import type { KeyContext, KeyStrategy, LimiterKey } from './types.js';

export interface PodUidKeyOptions {
  procRoot: string;
  /** Whether to read cgroups at all; false on a node that runs no pods. */
  kubernetesNode: boolean;
  /** How long one PID's cgroup read is reused. 0 = read on every call. */
  cacheTtlMs: number;
  /** Bound of the PID cache; the oldest entry is evicted when full. */
  maxCacheEntries?: number;
  now?: () => number;
}

interface CacheEntry {
  /** Start time of the process the entry was read for, so a reused PID does not inherit a pod. */
  startTime: string | null;
  podUID: string | null;
  expiresAt: number;
}

/**
 * Decides cfg.rateLimit.kubernetesNode 'auto': a Kubernetes node if the k8s attestor is
 * configured or the agent itself runs in a kubepods cgroup (a DaemonSet pod).
 */
export function detectKubernetesNode(cfg: AgentConfig, selfCgroupPath = '/proc/self/cgroup'): boolean {
  if (cfg.rateLimit.kubernetesNode !== 'auto') return cfg.rateLimit.kubernetesNode === 'true';
  if (cfg.attestors.includes('k8s')) return true;
  try {
    return readFileSync(selfCgroupPath, 'utf8').includes('kubepods');
  } catch {
    return false;
  }
}

/**
 * key() is synchronous by contract and stays so: the cgroup file is a few hundred bytes of procfs
 * (no disk I/O) and readFileSync of it costs microseconds, less than a promise round trip would
 * add to every call; the per-PID cache removes even that for a caller's repeated calls.
 */
export function createPodUidKeyStrategy(opts: PodUidKeyOptions): KeyStrategy {
  const cache = new Map<number, CacheEntry>();
  const maxEntries = opts.maxCacheEntries ?? 16_384;
  const now = opts.now ?? (() => performance.now());

  function podUIDOf(pid: number, startTime: string | null): string | null {
    const t = now();
    const hit = cache.get(pid);
    if (hit !== undefined && hit.startTime === startTime && hit.expiresAt > t) return hit.podUID;
    let podUID: string | null;
    try {
      podUID = parseCgroup(readFileSync(join(opts.procRoot, String(pid), 'cgroup'), 'utf8')).podUID;
    } catch {
      // The caller is gone (or procfs unreadable): key by UID; the caller check will fail the call.
      return null;
    }
    if (opts.cacheTtlMs > 0) {
      if (hit !== undefined) cache.delete(pid);
      else if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
      cache.set(pid, { startTime, podUID, expiresAt: t + opts.cacheTtlMs });
    }
    return podUID;
  }

  return {
    name: 'pod-uid',
    needsSelectors: keyNeedsAttestation('pod-uid'),
    key(ctx: KeyContext): LimiterKey {
      if (!opts.kubernetesNode) return osUidKey(ctx);
      const podUID = podUIDOf(ctx.caller.pid, ctx.caller.startTime);
      if (podUID === null) return osUidKey(ctx);
      return { key: `pod:${podUID}`, keyType: 'pod_uid' };
    },
  };
}

export function createPodUidKeyStrategyFromConfig(cfg: AgentConfig): KeyStrategy {
  return createPodUidKeyStrategy({
    procRoot: cfg.procRoot,
    kubernetesNode: detectKubernetesNode(cfg),
    cacheTtlMs: cfg.rateLimit.cgroupCacheTtl,
  });
}
