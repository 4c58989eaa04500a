// Reads a stored tweet by id: the hot path of GET /social/v1/tweets/{id}.
// SQLite: a prepared statement, read synchronously; reads of one tweet arriving in the same
// event-loop turn share one lookup, as a popular tweet's readers do; the next turn reads again.
// Postgres: a process-local cache of stored tweets, each kept only while it is fresh (fetched less
// than CACHE_TWEET_SECONDS ago: the same copy the store would answer as cached), bounded in memory
// (TWEET_CACHE_MB, oldest dropped first). Another process's newer copy is seen once ours expires.
import type { Store } from '../db/connect.js';
import { TurnMemo } from '../db/turn-memo.js';
import { findTweetJson, storedTweetJson, tweetJson, type StoredTweetJson } from './social-repo.js';

type Found = StoredTweetJson | undefined;

export interface TweetLookupOptions {
  /** How long a stored tweet is served as fresh (CACHE_TWEET_SECONDS). */
  freshSeconds: number;
  /** Memory the Postgres cache may hold, in bytes of JSON text (counted as UTF-16: 2 bytes a char) and of its UTF-8 copy beyond ASCII. */
  maxBytes: number;
  now?: () => number;
}

/** Per cached entry beyond its text: the Map entry, the key and the object (an estimate). */
const ENTRY_OVERHEAD_BYTES = 160;
const entryBytes = (c: StoredTweetJson): number => c.json.length * 2 + (c.utf8?.length ?? 0) + ENTRY_OVERHEAD_BYTES;

export class TweetLookup {
  private readonly memo = new TurnMemo<string, Found>();
  private readonly readSync: ((id: string) => Found) | undefined;
  private readonly cache = new Map<string, StoredTweetJson>();
  private bytes = 0;
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    private readonly opts: TweetLookupOptions = { freshSeconds: 60, maxBytes: 64 << 20 },
  ) {
    this.now = opts.now ?? Date.now;
    if (store.sqlite) {
      const stmt = store.sqlite.prepare<[string], { data: string; fetched_at: string }>('select data, fetched_at from tweets where id = ?');
      this.readSync = (id) => {
        const r = stmt.get(id);
        return r && storedTweetJson(r);
      };
    }
  }

  /**
   * The stored tweet when it is known without waiting (SQLite: read now; Postgres: cached and
   * fresh), else undefined. The fast path of SocialService.freshTweet.
   */
  known(id: string): Found {
    if (this.readSync) return this.memo.get(id, this.readSync);
    const c = this.cache.get(id);
    if (!c) return undefined;
    if (this.fresh(c)) return c;
    this.drop(id, c);
    return undefined;
  }

  async get(id: string): Promise<Found> {
    const k = this.known(id);
    if (k || this.readSync) return k;
    const found = await findTweetJson(this.store.db, id);
    if (found) this.remember(id, found);
    return found;
  }

  /** After this process stored a newer copy (its JSON, fetched at `fetchedAtMs`). */
  stored(id: string, json: string, fetchedAtMs: number): void {
    // SQLite reads the new copy on its next turn: only the Postgres cache keeps one (with its bytes).
    if (this.readSync) this.memo.delete(id);
    else this.remember(id, tweetJson(json, fetchedAtMs));
  }

  /** Entries and bytes held (tests, metrics). */
  size(): { entries: number; bytes: number } {
    return { entries: this.cache.size, bytes: this.bytes };
  }

  private fresh(c: StoredTweetJson): boolean {
    return c.fetchedAtMs > this.now() - this.opts.freshSeconds * 1000;
  }

  private remember(id: string, copy: StoredTweetJson): void {
    if (!this.fresh(copy)) return;
    const size = entryBytes(copy);
    if (size > this.opts.maxBytes) return;
    const old = this.cache.get(id);
    if (old) this.drop(id, old);
    while (this.bytes + size > this.opts.maxBytes) {
      const [oldestId, oldest] = this.cache.entries().next().value as [string, StoredTweetJson];
      this.drop(oldestId, oldest);
    }
    this.cache.set(id, copy);
    this.bytes += size;
  }

  private drop(id: string, c: StoredTweetJson): void {
    this.cache.delete(id);
    this.bytes -= entryBytes(c);
  }
}
