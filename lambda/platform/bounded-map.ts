/**
 * A Map that forgets its oldest entry once it holds `max`: per-instance memories (verified
 * principals, token owners) stay bounded however many distinct tokens an instance sees.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.max) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}
