// Crawl ingest into the embedded store (SQLite): tweets/s of upsertTweets (the store's batch upsert,
// 500 per transaction) and of the crawl's own page writer (100 per page, counters in the same
// transaction), on a fresh store. Then the same tweets again with changed metrics (the refresh path).
// Run alone: node --import tsx bench/ingest.ts [tweets]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { crawlPagesFor } from '../src/crawl/page-ingest.js';
import type { Tweet } from '../src/domain/models.js';
import { claimById } from '../src/jobs/lease.js';
import { tweetStoreFor } from '../src/social/tweet-store.js';
import { openStore, type Store } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { demoTweets } from './fixtures.js';
import { targetLease } from '../src/crawl/crawl-repo.js';

async function freshStore(): Promise<{ store: Store; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'sdg-bench-ingest-'));
  const store = openStore({ dataDir: dir });
  await migrateToLatest(store);
  return { store, dir };
}

const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));

export async function benchIngest(opts: { tweets?: number } = {}): Promise<Record<string, unknown>> {
  const n = opts.tweets ?? 200_000;
  let tweets: Tweet[] | undefined = await demoTweets(n);
  const count = tweets.length;
  let bumped: Tweet[] | undefined = tweets.map((t) => ({ ...t, metrics: { ...t.metrics, views: t.metrics.views + 1 } }));
  const fetchedAt = new Date().toISOString();
  const avgJson = Math.round(tweets.reduce((s, t) => s + JSON.stringify(t).length, 0) / tweets.length);

  // 1. The tweet store, in calls of 5,000 new tweets; then the refresh, in calls of 1,000.
  const a = await freshStore();
  let t0 = performance.now();
  let inserted = 0;
  const writer = tweetStoreFor(a.store);
  for (let i = 0; i < tweets.length; i += 5_000) inserted += (await writer.write(tweets.slice(i, i + 5_000), fetchedAt)).inserted;
  const upsertMs = performance.now() - t0;
  t0 = performance.now();
  let updated = 0;
  for (let i = 0; i < bumped.length; i += 1_000) updated += (await writer.write(bumped.slice(i, i + 1_000), fetchedAt)).updated;
  const refreshMs = performance.now() - t0;
  bumped = undefined;
  await a.store.close();
  rmSync(a.dir, { recursive: true, force: true });

  // 2. The crawl's page writer: pages of 100 with their target's counters, as a crawl stores them,
  //    from CRAWL_CONCURRENCY (8) accounts at once, as the crawl runs them.
  const b = await freshStore();
  const db = b.store.db;
  const now = new Date().toISOString();
  const workers = 8;
  await db.insertInto('crawl_cycles').values({ id: 'cyc_bench', trigger: 'schedule', slot: 1, status: 'running', started_at: now, completed_at: null, accounts_targeted: workers, accounts_completed: 0, accounts_failed: 0, tweets_ingested: 0, tweets_updated: 0, lock_version: 0 }).execute();
  const claims = [];
  for (let w = 0; w < workers; w++) {
    const id = `cyc_bench:${w}`;
    await db.insertInto('crawl_targets').values({ id, cycle_id: 'cyc_bench', social_user_id: String(w + 1), status: 'pending', tweets_ingested: 0, tweets_updated: 0, error: null, created_at: now, started_at: null, completed_at: null, attempts: 0, lease_owner: null, lease_expires_at: null }).execute();
    claims.push((await claimById(db, targetLease, id, 'bench', 3_600_000))!);
  }
  const writer2 = crawlPagesFor(b.store);
  const per = Math.ceil(tweets.length / workers);
  // Each worker's pages, let go once written: a crawl holds the page it writes, not a whole
  // backfill (docs/benchmarks.md, "Where the time goes", 2026-11-28).
  const queues: Array<Array<Tweet[] | undefined>> = [];
  for (let w = 0; w < workers; w++) {
    const mine = tweets.slice(w * per, (w + 1) * per);
    const pages: Array<Tweet[] | undefined> = [];
    for (let i = 0; i < mine.length; i += 100) pages.push(mine.slice(i, i + 100));
    queues.push(pages);
  }
  tweets = undefined;
  const gc = gcTimer();
  t0 = performance.now();
  const counts = await Promise.all(
    claims.map(async (claim, w) => {
      let n = 0;
      const pages = queues[w]!;
      for (let i = 0; i < pages.length; i++) {
        const page = pages[i]!;
        pages[i] = undefined;
        n += (await writer2.ingest(claim, page, fetchedAt)).inserted;
      }
      return n;
    }),
  );
  const crawlInserted = counts.reduce((x, y) => x + y, 0);
  const crawlMs = performance.now() - t0;
  const crawlGcMs = gc.stop();
  await b.store.close();
  rmSync(b.dir, { recursive: true, force: true });

  return {
    tweets: count,
    'tweet store, calls of 5,000 new (tweets/s)': rate(inserted, upsertMs),
    'tweet store, metrics refresh (tweets/s)': rate(updated, refreshMs),
    'crawl page writer, pages of 100 from 8 accounts at once (tweets/s)': rate(crawlInserted, crawlMs),
    'crawl page writer, garbage collection (% of its time)': Math.round((100 * crawlGcMs) / crawlMs),
    'avg tweet JSON (bytes)': avgJson,
  };
}

/** Time spent in garbage collection from now until stop(), in ms (the 'gc' performance entries). */
function gcTimer(): { stop(): number } {
  let ms = 0;
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) ms += e.duration;
  });
  obs.observe({ entryTypes: ['gc'] });
  return {
    stop() {
      for (const e of obs.takeRecords()) ms += e.duration;
      obs.disconnect();
      return Math.round(ms);
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const n = process.argv[2] ? Number(process.argv[2]) : undefined;
  console.log(JSON.stringify(await benchIngest(n ? { tweets: n } : {}), null, 2));
}
