// results.json's scenario.modeledCosts said in words for people: only what differs from the agent's
// defaults (src/agent/config.ts, modelSchema; a test keeps the two in step), once for every variant
// when they all share it. Older folders record the settings flat ({ attestationWorkingSet: "256Ki" }),
// newer ones per variant ({ "pre-attestation": { cancelAbandoned: false } }); both are read.

/** The reference agent's model defaults: a setting equal to its default models nothing. */
export const MODEL_DEFAULTS: Readonly<Record<string, unknown>> = { attestationWorkingSet: 0, podListWorkingSet: 0, cancelAbandoned: true };
/** The emulated kubelet's modeled answer time (every agent kind that asks the emulator): none unless set. */
const KUBELET_DEFAULTS: Readonly<Record<string, unknown>> = { kubeletLatency: 0 };

/** One sentence of modeled costs and the variants it holds for (null: every variant, or the run as a whole). */
export interface ModeledCostsLine {
  variants: string[] | null;
  text: string;
}

const isZeroSize = (v: unknown) => v === 0 || (typeof v === 'string' && /^\s*0+(\.0*)?\s*[KMGT]?i?B?\s*$/i.test(v));

function isDefault(key: string, value: unknown): boolean {
  const defaults = key in MODEL_DEFAULTS ? MODEL_DEFAULTS : KUBELET_DEFAULTS;
  if (!(key in defaults)) return false;
  const d = defaults[key];
  return d === 0 ? isZeroSize(value) : value === d;
}

/** A value as plain text: numbers and strings as they are, objects as `key value` pairs (never JSON). */
function plain(value: unknown): string {
  if (value === null || typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return value.map(plain).join(', ');
  return Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${k} ${plain(v)}`)
    .join(', ');
}

function inWords(key: string, value: unknown): string {
  switch (key) {
    case 'cancelAbandoned':
      return value === false ? 'attestations run on after their caller gave up (model.cancelAbandoned false)' : `model.cancelAbandoned ${plain(value)}`;
    case 'attestationWorkingSet':
      return `each attestation in flight holds ${plain(value)} more (model.attestationWorkingSet)`;
    case 'podListWorkingSet':
      return `each parsed kubelet pod list holds ${plain(value)} more (model.podListWorkingSet)`;
    case 'kubeletLatency':
      return `the emulated kubelet answers GET /pods after ${typeof value === 'number' ? `${value} ms` : plain(value)} (agent.kubelet.latency)`;
    case 'kubeletLatencyModel': {
      const m = value as { base?: number; perConcurrent?: number; perMiB?: number };
      return `and after ${m.base ?? 0} ms + ${m.perConcurrent ?? 0} ms per other request in flight + ${m.perMiB ?? 0} ms per MiB of the list more (agent.kubelet.latencyModel)`;
    }
    default:
      return `model.${key} ${plain(value)}`;
  }
}

function phrasesOf(costs: Record<string, unknown>): string[] {
  return Object.entries(costs)
    .filter(([k, v]) => !isDefault(k, v))
    .map(([k, v]) => inWords(k, v));
}

/** The modeled costs that differ from the defaults, in words; empty when nothing is modeled. */
export function modeledCostsInWords(costs: Record<string, unknown> | undefined, variantNames: string[] = []): ModeledCostsLine[] {
  const entries = Object.entries(costs ?? {});
  if (entries.length === 0) return [];
  const perVariant = entries.every(([, v]) => v !== null && typeof v === 'object' && !Array.isArray(v));
  if (!perVariant) {
    const text = phrasesOf(costs!).join('; ');
    return text ? [{ variants: null, text }] : [];
  }
  // Variants that share the same phrases are named together; every variant of the run: said once.
  const groups = new Map<string, string[]>();
  for (const [variant, v] of entries) {
    const text = phrasesOf(v as Record<string, unknown>).join('; ');
    if (text) groups.set(text, [...(groups.get(text) ?? []), variant]);
  }
  const all = new Set(variantNames.length > 0 ? variantNames : entries.map(([n]) => n));
  return [...groups].map(([text, variants]) => ({
    variants: variants.length === all.size && variants.every((n) => all.has(n)) ? null : variants,
    text,
  }));
}

/** "every variant: …" / "pre-attestation, disabled: …", one line each. */
export function modeledCostsSentences(costs: Record<string, unknown> | undefined, variantNames: string[] = []): string[] {
  return modeledCostsInWords(costs, variantNames).map((l) => `${l.variants === null ? 'every variant' : l.variants.join(', ')}: ${l.text}`);
}
