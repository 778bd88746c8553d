// The one parser of /proc/<pid>/stat: the command name (field 2) may hold spaces and parentheses,
// so fields are split after its last ')'. Imported directly (not via util/index) by worker-side code.

/** Fields 3.. of a /proc/<pid>/stat line (index 0 = field 3, state), or null when malformed. */
export function statFields(text: string): string[] | null {
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  return text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
}

/** Field 22: start time in clock ticks since boot, as text (compared, never computed with). */
export function statStartTime(text: string): string | null {
  return statFields(text)?.[19] ?? null;
}

/** Clock ticks per second of utime/stime; USER_HZ is 100 on every Linux this runs on. */
export const CLK_TCK = 100;

/** Fields 14 and 15, utime + stime, in seconds; null when malformed. */
export function statCpuSeconds(text: string): number | null {
  const fields = statFields(text);
  if (!fields) return null;
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
  return (utime + stime) / CLK_TCK;
}
