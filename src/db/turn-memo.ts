// Reads remembered until the end of the current event-loop turn. Requests that arrive together (under
// load, dozens a turn) share one read of the same thing; the next turn reads again, so anything
// committed before a request arrived is seen by it.
export class TurnMemo<K, V> {
  // A new Map each turn rather than clear(): V8 gives a cleared Map that has lived long a new table
  // in the old generation, and the old table keeps the turn's values alive until a full collection.
  private values = new Map<K, V>();
  private scheduled = false;
  /**
   * The last key asked for and its value. The keys are strings fresh from each request (an API key,
   * a tweet id), whose hash V8 computes at their first Map lookup: about 800 instructions a lookup
   * of a 47-character key, where comparing it with the last one costs about 100. A turn's requests
   * mostly repeat the last key (one caller's burst, one popular tweet).
   */
  private lastKey: K | undefined;
  private lastValue: V | undefined;
  private hasLast = false;

  /** The value remembered this turn, else `read(key)` (remembered, even when undefined). */
  get(key: K, read: (key: K) => V): V {
    if (this.hasLast && key === this.lastKey) return this.lastValue as V;
    let value = this.values.get(key);
    if (value === undefined && !this.values.has(key)) {
      value = read(key);
      this.values.set(key, value);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.clear());
      }
    }
    this.lastKey = key;
    this.lastValue = value;
    this.hasLast = true;
    return value as V;
  }

  /** After this process changed what `key` names. */
  delete(key: K): void {
    this.values.delete(key);
    if (key === this.lastKey) this.forgetLast();
  }

  clear(): void {
    this.scheduled = false;
    this.forgetLast();
    if (this.values.size > 0) this.values = new Map();
  }

  private forgetLast(): void {
    this.hasLast = false;
    this.lastKey = undefined;
    this.lastValue = undefined;
  }
}
