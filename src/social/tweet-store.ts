// Writes fetched tweets: new ones are inserted (ingested), stored ones rewritten only when their
// metrics changed (updated). The crawl and the API reads both write through here. SQLite runs the
// rows through prepared statements in the store's group commit; Postgres uses multi-row Kysely
// statements. Each implementation also offers the write as a part of a caller's unit of work
// (`writeSync` inside a grouped job, `writeIn` inside a transaction): see crawl/page-ingest.ts.
import type SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { Tweet } from '../domain/models.js';
import type { Store } from '../db/connect.js';
import type { GroupOptions } from '../db/group-commit.js';
import type { Database } from '../db/schema.js';
import { tweetSeq } from './social-repo.js';

export interface WriteCounts {
  inserted: number;
  updated: number;
}

export interface WriteOptions {
  /**
   * A stored tweet whose metrics did not change still gets `fetchedAt`: it was seen at the source
   * now, so it is fresh again for CACHE_TWEET_SECONDS (the API's read of one tweet). The crawl
   * leaves such rows alone (no write for what did not change).
   */
  touch?: boolean;
}

export interface TweetStore {
  /** Writes tweets in a commit of their own (on SQLite shared with concurrent writers). */
  write(tweets: Tweet[], fetchedAt: string, opts?: WriteOptions): Promise<WriteCounts>;
}

// created_at is kept as toISOString() text everywhere, so it sorts and compares the same on both stores.
// The sources already give it in that form; parsing and formatting it again is only the fallback.
const CANONICAL = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const isoTime = (s: string): string => (CANONICAL.test(s) ? s : new Date(s).toISOString());

const row = (t: Tweet, fetchedAt: string) => ({
  id: t.id,
  seq: tweetSeq(t.id),
  author_id: t.authorId,
  created_at: isoTime(t.createdAt),
  data: JSON.stringify(t),
  metrics: JSON.stringify(t.metrics),
  fetched_at: fetchedAt,
});

export const unique = (tweets: Tweet[]) => [...new Map(tweets.map((t) => [t.id, t])).values()];

export class SqliteTweetStore implements TweetStore {
  private readonly insert: SQLite.Statement<[string, ReturnType<typeof tweetSeq>, string, string, string, string, string]>;
  private readonly update: SQLite.Statement<[string, string, string, string, string]>;
  private readonly touch: SQLite.Statement<[string, string, string]>;

  constructor(
    sqlite: SQLite.Database,
    private readonly grouped: <T>(fn: () => T, opts?: GroupOptions) => Promise<T>,
    private readonly noteBulkRows: (rows: number) => void = () => undefined,
  ) {
    this.insert = sqlite.prepare(
      `insert into tweets (id, seq, author_id, created_at, data, metrics, fetched_at) values (?, ?, ?, ?, ?, ?, ?)
       on conflict (id) do nothing`,
    );
    this.update = sqlite.prepare('update tweets set data = ?, metrics = ?, fetched_at = ? where id = ? and metrics <> ?');
    this.touch = sqlite.prepare('update tweets set fetched_at = ? where id = ? and fetched_at < ?');
  }

  /** The write as synchronous statements, for a caller that composes it into a grouped job of its own. */
  writeSync(tweets: Tweet[], fetchedAt: string, opts: WriteOptions = {}): WriteCounts {
    let inserted = 0;
    let updated = 0;
    for (const t of tweets) {
      const data = JSON.stringify(t);
      const metrics = JSON.stringify(t.metrics);
      if (this.insert.run(t.id, tweetSeq(t.id), t.authorId, isoTime(t.createdAt), data, metrics, fetchedAt).changes === 1) inserted++;
      else if (this.update.run(data, metrics, fetchedAt, t.id, metrics).changes === 1) updated++;
      else if (opts.touch) this.touch.run(fetchedAt, t.id, fetchedAt);
    }
    this.noteBulkRows(tweets.length);
    return { inserted, updated };
  }

  // Goes through the group commit: concurrent writers (other requests, crawl workers) share commits.
  // Rerunnable: its only effect is its statements.
  async write(tweets: Tweet[], fetchedAt: string, opts: WriteOptions = {}): Promise<WriteCounts> {
    const rows = unique(tweets);
    return this.grouped(() => this.writeSync(rows, fetchedAt, opts), { rerunnable: true });
  }
}

// Parameter limits: 500 rows × 7 columns stays well inside Postgres's 65535.
const CHUNK = 500;

export class KyselyTweetStore implements TweetStore {
  constructor(private readonly db: Kysely<Database>) {}

  async write(tweets: Tweet[], fetchedAt: string, opts: WriteOptions = {}): Promise<WriteCounts> {
    return this.writeIn(this.db, tweets, fetchedAt, opts);
  }

  /** The write with `db`, which may be a transaction the caller holds. */
  async writeIn(db: Kysely<Database>, tweets: Tweet[], fetchedAt: string, opts: WriteOptions = {}): Promise<WriteCounts> {
    const all = unique(tweets);
    let inserted = 0;
    let updated = 0;
    for (let i = 0; i < all.length; i += CHUNK) {
      const part = all.slice(i, i + CHUNK);
      const existing = new Map(
        (await db.selectFrom('tweets').select(['id', 'metrics']).where('id', 'in', part.map((t) => t.id)).execute()).map((r) => [r.id, r.metrics]),
      );
      const fresh = part.filter((t) => !existing.has(t.id));
      if (fresh.length > 0) {
        const res = await db
          .insertInto('tweets')
          .values(fresh.map((t) => row(t, fetchedAt)))
          // A concurrent writer may have stored it meanwhile: that copy is as good as ours.
          .onConflict((oc) => oc.column('id').doNothing())
          .executeTakeFirst();
        inserted += Number(res.numInsertedOrUpdatedRows ?? 0);
      }
      for (const t of part) {
        const before = existing.get(t.id);
        if (before === undefined) continue;
        const r = row(t, fetchedAt);
        if (r.metrics === before) {
          if (opts.touch) await db.updateTable('tweets').set({ fetched_at: fetchedAt }).where('id', '=', t.id).where('fetched_at', '<', fetchedAt).execute();
          continue;
        }
        await db.updateTable('tweets').set({ data: r.data, metrics: r.metrics, fetched_at: fetchedAt }).where('id', '=', t.id).execute();
        updated++;
      }
    }
    return { inserted, updated };
  }
}

/** The implementation for the store: SQLite's when it has a group commit, else Kysely's. */
export function tweetStoreFor(store: Store): SqliteTweetStore | KyselyTweetStore {
  return store.sqlite && store.grouped ? new SqliteTweetStore(store.sqlite, store.grouped, store.noteBulkRows) : new KyselyTweetStore(store.db);
}
