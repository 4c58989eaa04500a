// Reads a stored tweet by id: the hot path of GET /social/v1/tweets/{id}. On SQLite a prepared
// statement (no query building per call). Reads of one tweet arriving in the same event-loop turn
// share one lookup, as a popular tweet's readers do; the next turn reads again.
import type { Tweet } from '../domain/models.js';
import type { Store } from '../store/connect.js';
import { TurnMemo } from '../store/turn-memo.js';
import { findTweet, storedTweet, type Stored } from './social-repo.js';

type Found = Stored<Tweet> | undefined;

export class TweetLookup {
  private readonly memo = new TurnMemo<string, Found | Promise<Found>>();
  private readonly read: (id: string) => Found | Promise<Found>;

  constructor(store: Store) {
    if (store.sqlite) {
      const stmt = store.sqlite.prepare<[string], { data: string; fetched_at: string }>('select data, fetched_at from tweets where id = ?');
      this.read = (id) => {
        const r = stmt.get(id);
        return r && storedTweet(r);
      };
    } else {
      this.read = (id) => findTweet(store.db, id);
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
