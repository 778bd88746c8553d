// The mounts of this process's mount namespace from /proc/self/mountinfo, and the one a path is
// on: what a message names when a filesystem cannot do what a run needs of it.
import { readFileSync, realpathSync } from 'node:fs';

export interface MountEntry {
  mountPoint: string;
  fsType: string;
  source: string;
}

/** Mount points from /proc/self/mountinfo text (field 5, octal escapes such as \040 decoded), with type and source. */
export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const [left, right] = line.split(' - ');
    const f = (left ?? '').split(' ');
    if (f.length < 5 || right === undefined) continue;
    const mountPoint = f[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    const [fsType = '', source = ''] = right.split(' ');
    out.push({ mountPoint, fsType, source });
  }
  return out;
}

/** The mount `path` is on (the deepest mount point above its real path; the last mounted wins), or null when unreadable. */
export function mountOf(path: string, text?: string): MountEntry | null {
  let real: string;
  let info: string;
  try {
    real = realpathSync(path);
    info = text ?? readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return null;
  }
  let best: MountEntry | null = null;
  for (const m of parseMountinfo(info)) {
    const under = m.mountPoint === '/' || real === m.mountPoint || real.startsWith(`${m.mountPoint}/`);
    if (under && (!best || m.mountPoint.length >= best.mountPoint.length)) best = m;
  }
  return best;
}
