// Stores one page of an account's tweets and adds what changed to the target's counters, in one
// unit of work, only while the claim still holds the target's lease: a retried account never
// counts a tweet twice. The same unit adds them to the cycle's row too, so that the crawl status of
// a running cycle reads one row instead of summing every target (the update comes last: on Postgres
// it holds the cycle row's lock only until the commit). Two implementations, chosen by the store: on
// SQLite the page joins the store's group commit, so concurrent crawl workers share commits (the
// API's writes of the same turn commit first, on their own, and while they flow the pages are paced:
// see db/group-commit.ts); elsewhere it is one transaction.
import type SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import type { Store } from '../db/connect.js';
import type { Tweet } from '../domain/models.js';
import { holdLease, LeaseLostError, type Claim } from '../jobs/lease.js';
import { KyselyTweetStore, SqliteTweetStore, unique, type WriteCounts } from '../social/tweet-store.js';
import { targetLease } from './crawl-repo.js';

export interface CrawlPageIngest {
  ingest(claim: Claim, page: Tweet[], fetchedAt: string): Promise<WriteCounts>;
}

const CYCLE_COUNT_SQL =
  'update crawl_cycles set tweets_ingested = tweets_ingested + ?, tweets_updated = tweets_updated + ? where id = (select cycle_id from crawl_targets where id = ?)';

const NOTHING: WriteCounts = { inserted: 0, updated: 0 };

export class SqlitePageIngest implements CrawlPageIngest {
  private readonly hold: SQLite.Statement<[string, string]>;
  private readonly count: SQLite.Statement<[number, number, string]>;
  private readonly countCycle: SQLite.Statement<[number, number, string]>;
  private readonly tweets: SqliteTweetStore;

  constructor(
    sqlite: SQLite.Database,
    private readonly grouped: NonNullable<Store['grouped']>,
    noteBulkRows?: (rows: number) => void,
  ) {
    this.tweets = new SqliteTweetStore(sqlite, grouped, noteBulkRows);
    // Touches the row only while this claim holds it: no change means the lease was lost.
    this.hold = sqlite.prepare("update crawl_targets set attempts = attempts where id = ? and lease_owner = ? and status = 'running'");
    this.count = sqlite.prepare('update crawl_targets set tweets_ingested = tweets_ingested + ?, tweets_updated = tweets_updated + ? where id = ?');
    this.countCycle = sqlite.prepare(CYCLE_COUNT_SQL);
  }

  async ingest(claim: Claim, page: Tweet[], fetchedAt: string): Promise<WriteCounts> {
    if (page.length === 0) return NOTHING;
    const rows = unique(page);
    // Rerunnable: statements only, so it skips the savepoint of its own (see group-commit.ts).
    return this.grouped(
      () => {
        if (this.hold.run(claim.id, claim.owner).changes !== 1) throw new LeaseLostError(targetLease, claim.id);
        const counts = this.tweets.writeSync(rows, fetchedAt);
        if (counts.inserted > 0 || counts.updated > 0) {
          this.count.run(counts.inserted, counts.updated, claim.id);
          this.countCycle.run(counts.inserted, counts.updated, claim.id);
        }
        return counts;
      },
      // Bulk: a WAL reset's long copy holds the crawl's pages, not the calls' charges (busy-writer.ts).
      { rerunnable: true, bulk: true },
    );
  }
}

export class KyselyPageIngest implements CrawlPageIngest {
  private readonly tweets: KyselyTweetStore;

  constructor(private readonly store: Store) {
    this.tweets = new KyselyTweetStore(store.db);
  }

  async ingest(claim: Claim, page: Tweet[], fetchedAt: string): Promise<WriteCounts> {
    if (page.length === 0) return NOTHING;
    return this.store.db.transaction().execute(async (trx) => {
      await holdLease(trx, targetLease, claim);
      const counts = await this.tweets.writeIn(trx, page, fetchedAt);
      if (counts.inserted > 0 || counts.updated > 0) {
        await trx
          .updateTable('crawl_targets')
          .set({ tweets_ingested: sql`tweets_ingested + ${counts.inserted}`, tweets_updated: sql`tweets_updated + ${counts.updated}` })
          .where('id', '=', claim.id)
          .execute();
        await sql`update crawl_cycles set tweets_ingested = tweets_ingested + ${counts.inserted}, tweets_updated = tweets_updated + ${counts.updated}
                   where id = (select cycle_id from crawl_targets where id = ${claim.id})`.execute(trx);
      }
      return counts;
    });
  }
}

export function crawlPagesFor(store: Store): CrawlPageIngest {
  return store.sqlite && store.grouped ? new SqlitePageIngest(store.sqlite, store.grouped, store.noteBulkRows) : new KyselyPageIngest(store);
}
