// Reads a stored tweet by id: the hot path of GET /social/v1/tweets/{id}. On SQLite a prepared
// statement (no query building per call). Reads of one tweet arriving in the same event-loop turn
// share one lookup, as a popular tweet's readers do; the next turn reads again.
import type { Store } from '../db/connect.js';
import { TurnMemo } from '../db/turn-memo.js';
import { findTweetJson, storedTweetJson, type StoredTweetJson } from './social-repo.js';

type Found = StoredTweetJson | undefined;

export class TweetLookup {
  private readonly memo = new TurnMemo<string, Found | Promise<Found>>();
  private readonly read: (id: string) => Found | Promise<Found>;

  constructor(store: Store) {
    if (store.sqlite) {
      const stmt = store.sqlite.prepare<[string], { data: string; fetched_at: string }>('select data, fetched_at from tweets where id = ?');
      this.read = (id) => {
        const r = stmt.get(id);
        return r && storedTweetJson(r);
      };
    } else {
      this.read = (id) => findTweetJson(store.db, id);
    }
  }

  get(id: string): Found | Promise<Found> {
    return this.memo.get(id, this.read);
  }

  /** After this process stored a newer copy. */
  forget(id: string): void {
    this.memo.delete(id);
  }
}
