// What a running cluster left on record, so `status` and `down` work after a crash: each daemon's
// PID with its binary and start time, the sysctls to restore, and the firewall chains that existed
// before. PIDs wrap (32768 on small machines): a PID is ours only while /proc/<pid>/exe is still its
// binary and its start time is unchanged.
import { existsSync, mkdirSync, readFileSync, readlinkSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { statStartTime } from '../util/procfs-stat.js';
import type { DaemonSpec } from './render-config.js';

export interface DaemonRecord {
  name: DaemonSpec['name'];
  pid: number;
  exe: string;
  /** Field 22 of /proc/<pid>/stat at start. */
  startTime: string | null;
  log: string;
}

export interface ClusterState {
  version: 1;
  startedAt: string;
  nodeName: string;
  kubeconfig: string;
  context: string;
  daemons: DaemonRecord[];
  /** Set once `up` saw the node Ready; absent or false: start-up did not finish (it failed or was killed). */
  ready?: boolean;
  /** Values before the kubelet changed them; restored by `down`. */
  sysctls: Record<string, string>;
  /** iptables/ip6tables chains (table:chain) that existed before `up`: `down` removes only chains added since. */
  firewallChains: { v4: string[]; v6: string[] };
}

export function readState(file: string): ClusterState | null {
  if (!existsSync(file)) return null;
  try {
    const s = JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
    return s.version === 1 && Array.isArray(s.daemons) ? s : null;
  } catch {
    return null;
  }
}

/** Written atomically after every change, so a SIGKILL between two writes leaves the last whole state. */
export function writeState(file: string, state: ClusterState): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

export interface ProcReader {
  exe(pid: number): string | null;
  stat(pid: number): string | null;
}

export const procfs: ProcReader = {
  exe: (pid) => {
    try {
      return readlinkSync(`/proc/${pid}/exe`);
    } catch {
      return null;
    }
  },
  stat: (pid) => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return null;
    }
  },
};

/** The recorded daemon still runs as that PID: same binary (a replaced binary reads "… (deleted)"), same start time. */
export function isOurs(d: Pick<DaemonRecord, 'pid' | 'exe' | 'startTime'>, proc: ProcReader = procfs): boolean {
  const exe = proc.exe(d.pid);
  if (exe === null || exe.replace(/ \(deleted\)$/, '') !== d.exe) return false;
  if (d.startTime === null) return true;
  const stat = proc.stat(d.pid);
  return stat !== null && statStartTime(stat) === d.startTime;
}

export function recordFor(spec: Pick<DaemonSpec, 'name' | 'exe'>, pid: number, log: string, proc: ProcReader = procfs): DaemonRecord {
  const stat = proc.stat(pid);
  return { name: spec.name, pid, exe: proc.exe(pid)?.replace(/ \(deleted\)$/, '') ?? spec.exe, startTime: stat ? statStartTime(stat) : null, log };
}
