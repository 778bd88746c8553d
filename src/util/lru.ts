// A size-bounded map that forgets the least recently used key: caches keyed by caller-controlled
// values (audiences, SPIFFE IDs, PIDs) must not grow without limit under a storm.

export class LruMap<K, V> {
  readonly #map = new Map<K, V>();
  readonly max: number;

  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`LruMap max must be a positive integer, got ${max}`);
    this.max = max;
  }

  get size(): number {
    return this.#map.size;
  }

  /** The value, marked as most recently used. */
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value === undefined) return undefined;
    // Map iteration order is insertion order: re-inserting moves the key to the young end.
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  set(key: K, value: V): this {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.max) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
    return this;
  }

  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  clear(): void {
    this.#map.clear();
  }
}
