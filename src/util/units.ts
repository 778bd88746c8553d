// Parsing of the human units used in flags and YAML: durations ("30s", "2m", "500ms") and byte
// sizes ("128Mi", "1Gi", "512M"), the way Kubernetes manifests spell them.

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;

/** Milliseconds from "250ms", "30s", "2m", "1h" or a bare number of seconds. Null when invalid. */
export function parseDurationMs(input: string | number): number | null {
  if (typeof input === 'number') return Number.isFinite(input) && input >= 0 ? input * 1000 : null;
  const text = input.trim();
  if (/^\d+(?:\.\d+)?$/.test(text)) return Number(text) * 1000;
  const m = DURATION_RE.exec(text);
  if (!m) return null;
  return Math.round(Number(m[1]) * DURATION_UNITS[m[2]!]!);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return s ? `${m}m${s}s` : `${m}m`;
}

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};
const SIZE_RE = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|K|M|G|T)?$/;

/** Bytes from "128Mi", "1Gi", "512M", "4096". Null when invalid. */
export function parseBytes(input: string | number): number | null {
  if (typeof input === 'number') return Number.isInteger(input) && input >= 0 ? input : null;
  const m = SIZE_RE.exec(input.trim());
  if (!m) return null;
  return Math.round(Number(m[1]) * SIZE_UNITS[m[2] ?? '']!);
}

export function formatMiB(bytes: number, digits = 1): string {
  return `${(bytes / 2 ** 20).toFixed(digits)} MiB`;
}
