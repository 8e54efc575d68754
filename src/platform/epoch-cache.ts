/**
 * A bounded cache whose entries hold only while a counter kept elsewhere (in the database) stays
 * the same: the reader passes the counter it just read to `sync`, which drops everything when the
 * counter moved, and an entry is stored only under the counter read before its data was (an answer
 * read before a change and stored after it would otherwise outlive the change). The oldest entry
 * goes first when it is full.
 */
export class EpochCache<V> {
  #epoch: number | undefined;
  readonly #entries = new Map<string, V>();

  constructor(readonly maxEntries = 10_000) {}

  /**
   * Notes the counter just read; forgets every entry when it differs from the last one noted. The
   * counter only grows, so a smaller one was read before a concurrent caller's (or the database was
   * restored under a running process): the entries go, and the larger counter stays, so nothing is
   * stored under the smaller one.
   */
  sync(epoch: number): void {
    if (epoch === this.#epoch) return;
    this.#entries.clear();
    if (this.#epoch === undefined || epoch > this.#epoch) this.#epoch = epoch;
  }

  get(key: string): V | undefined {
    return this.#entries.get(key);
  }

  /** Keeps `value`, read after the counter was `epoch`, unless the counter has moved since. */
  set(epoch: number, key: string, value: V): void {
    if (epoch !== this.#epoch) return;
    if (!this.#entries.has(key) && this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, value);
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}
