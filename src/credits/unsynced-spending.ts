/** How often a process folds what its leases spent into their rows. */
const SYNC_MS = 1_000;

/**
 * What a process's groups spent from its lease rows since its last sync, by account, and the highest
 * ledger entry id among those groups' (lease-statements.ts, sync). Postgres only.
 */
export class UnsyncedSpending {
  private spent = new Map<string, number>();
  private upTo = 0;
  /** When the last sync took what there was (Date.now() time). */
  private lastAt = 0;

  add(accountId: string, amount: number): void {
    this.spent.set(accountId, (this.spent.get(accountId) ?? 0) + amount);
  }

  /** A group committed with entries up to `lastId`. */
  committed(lastId: number): void {
    if (lastId > this.upTo) this.upTo = lastId;
  }

  /** The account's lease row is gone (swept, or dropped): what it spent was counted from the ledger. */
  forget(accountId: string): void {
    this.spent.delete(accountId);
  }

  /**
   * Hands all there is to `sync`, if `now` or a second has passed since the last time, leaving
   * nothing; if it fails, what it was handed is kept for the next, for the accounts `keep` names
   * (those still leased).
   */
  async syncWith(now: boolean, sync: (accountIds: string[], amounts: number[], upTo: number) => Promise<void>, keep: (accountId: string) => boolean): Promise<void> {
    if (this.spent.size === 0 || (!now && Date.now() - this.lastAt < SYNC_MS)) return;
    this.lastAt = Date.now();
    const spent = this.spent;
    this.spent = new Map();
    try {
      await sync([...spent.keys()], [...spent.values()], this.upTo);
    } catch (err) {
      for (const [a, x] of spent) if (keep(a)) this.add(a, x);
      throw err;
    }
  }
}
