// Reads remembered until the end of the current event-loop turn. Requests that arrive together (under
// load, dozens a turn) share one read of the same thing; the next turn reads again, so anything
// committed before a request arrived is seen by it.
export class TurnMemo<K, V> {
  // A new Map each turn rather than clear(): V8 gives a cleared Map that has lived long a new table
  // in the old generation, and the old table keeps the turn's values alive until a full collection.
  private values = new Map<K, V>();
  private scheduled = false;

  /** The value remembered this turn, else `read(key)` (remembered, even when undefined). */
  get(key: K, read: (key: K) => V): V {
    const known = this.values.get(key);
    if (known !== undefined || this.values.has(key)) return known as V;
    const value = read(key);
    this.values.set(key, value);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.clear());
    }
    return value;
  }

  /** After this process changed what `key` names. */
  delete(key: K): void {
    this.values.delete(key);
  }

  clear(): void {
    this.scheduled = false;
    if (this.values.size > 0) this.values = new Map();
  }
}
