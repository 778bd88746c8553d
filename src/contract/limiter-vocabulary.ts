// The limiter's vocabulary, defined once: where a Workload API rate limiter can sit, what it can key
// its buckets on, and which keys each placement may use. Schemas, types, messages and docs derive from it.

/** Where the limiter sits: before workload attestation, after it, or nowhere. */
export const PLACEMENTS = ['pre-attestation', 'post-attestation', 'disabled'] as const;
export type PlacementName = (typeof PLACEMENTS)[number];

/** The placements that have a limiter. */
export const LIMITED_PLACEMENTS = ['pre-attestation', 'post-attestation'] as const satisfies readonly PlacementName[];
export type LimitedPlacement = (typeof LIMITED_PLACEMENTS)[number];

/** What a limiter can key its buckets on. */
export const KEY_STRATEGIES = ['pod-uid', 'os-uid', 'selector-set', 'spiffe-id'] as const;
export type KeyStrategyName = (typeof KEY_STRATEGIES)[number];

interface PlacementFacts {
  /** The placement in words, e.g. "before attestation". */
  where: string;
  /** Whether attestation has run when the limiter decides, so keys made from its results are known. */
  attested: boolean;
  /** The key when none is configured. */
  defaultKey: KeyStrategyName;
}

export const PLACEMENT_FACTS: Readonly<Record<LimitedPlacement, PlacementFacts>> = {
  'pre-attestation': { where: 'before attestation', attested: false, defaultKey: 'pod-uid' },
  'post-attestation': { where: 'after attestation', attested: true, defaultKey: 'selector-set' },
};

/**
 * Whether a key is made from what attestation yields: the caller's selectors, or the SPIFFE IDs its
 * entries grant. pod-uid reads the caller's cgroup and os-uid its peer credentials, both known at accept.
 */
const NEEDS_ATTESTATION: Readonly<Record<KeyStrategyName, boolean>> = {
  'pod-uid': false,
  'os-uid': false,
  'selector-set': true,
  'spiffe-id': true,
};

export function isPlacementName(name: unknown): name is PlacementName {
  return (PLACEMENTS as readonly unknown[]).includes(name);
}

export function isLimitedPlacement(name: PlacementName): name is LimitedPlacement {
  return (LIMITED_PLACEMENTS as readonly string[]).includes(name);
}

export function keyNeedsAttestation(key: KeyStrategyName): boolean {
  return NEEDS_ATTESTATION[key];
}

/** The keys a limiter at this placement can compute, in KEY_STRATEGIES order. */
export function keysAllowed(placement: LimitedPlacement): KeyStrategyName[] {
  return KEY_STRATEGIES.filter((k) => PLACEMENT_FACTS[placement].attested || !NEEDS_ATTESTATION[k]);
}

export function defaultKey(placement: LimitedPlacement): KeyStrategyName {
  return PLACEMENT_FACTS[placement].defaultKey;
}

/** The key a limiter uses: the configured one, else its placement's default; null without a limiter. */
export function keyInEffect(placement: PlacementName, configured: KeyStrategyName | undefined): KeyStrategyName | null {
  return isLimitedPlacement(placement) ? (configured ?? defaultKey(placement)) : null;
}

/** "default pod-uid before attestation, selector-set after attestation": for schema descriptions. */
export const DEFAULT_KEYS_IN_WORDS = `default ${LIMITED_PLACEMENTS.map((p) => `${PLACEMENT_FACTS[p].defaultKey} ${PLACEMENT_FACTS[p].where}`).join(', ')}`;

/**
 * Why a limiter at `placement` cannot use `key`, as the rest of a message about the key; null when
 * it can (a placement without a limiter ignores its key). `placementInput` names where the placement
 * was given ("rateLimit.placement"), when it was not implied by where the key was.
 */
export function keyRuleProblem(placement: PlacementName, key: unknown, placementInput?: string): string | null {
  if (key === undefined || !isLimitedPlacement(placement)) return null;
  const allowed: readonly string[] = keysAllowed(placement);
  if (allowed.includes(key as string)) return null;
  const choices = allowed.length === 1 ? allowed[0] : `${allowed.slice(0, -1).join(', ')} or ${allowed[allowed.length - 1]}`;
  const when = placementInput === undefined ? '' : ` when ${placementInput} is ${placement}`;
  const why = (KEY_STRATEGIES as readonly unknown[]).includes(key)
    ? ` (${key as string} is made from attestation results, and this limiter decides ${PLACEMENT_FACTS[placement].where})`
    : '';
  return `must be ${choices}${when}${why}, got ${JSON.stringify(key)}`;
}
