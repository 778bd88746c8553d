// Layering one settings object over another: a scenario's shared agent block under a variant's
// own, generated agent config under a scenario's `extra`.

/** A plain object (not null, not an array): the only values deepMerge descends into. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * `over` on top of `base`: plain objects on both sides merge key by key, arrays and scalars from
 * `over` replace, and a key `over` leaves undefined keeps `base`'s value (an optional setting not
 * given is not a setting cleared). Neither input is changed.
 */
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    const under = out[k];
    out[k] = isPlainObject(v) && isPlainObject(under) ? deepMerge(under, v) : v;
  }
  return out;
}
