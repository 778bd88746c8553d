// The kubelet tunes kernel settings for its own defaults (overcommit, panic on oops); these are the
// host's, so `up` records them before the kubelet starts and `down` puts them back.
import { readFileSync, writeFileSync } from 'node:fs';

export const KUBELET_SYSCTLS = [
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
] as const;

const path = (key: string) => `/proc/sys/${key.replace(/\./g, '/')}`;

export function readSysctls(keys: readonly string[] = KUBELET_SYSCTLS, read = (p: string) => readFileSync(p, 'utf8')): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of keys) {
    try {
      out[k] = read(path(k)).trim();
    } catch {
      // Not on this kernel: nothing to restore.
    }
  }
  return out;
}

/** Writes back the values that differ; returns what was restored, as "key: now → was". */
export function restoreSysctls(
  saved: Record<string, string>,
  read = (p: string) => readFileSync(p, 'utf8'),
  write = (p: string, v: string) => writeFileSync(p, v),
): string[] {
  const restored: string[] = [];
  for (const [k, v] of Object.entries(saved)) {
    try {
      const now = read(path(k)).trim();
      if (now === v) continue;
      write(path(k), `${v}\n`);
      restored.push(`${k}: ${now} → ${v}`);
    } catch (err) {
      restored.push(`${k}: could not restore ${v} (${(err as Error).message})`);
    }
  }
  return restored;
}
