// One point of the scaling benchmark, in a process of its own so that its peak memory is its own:
//   node dist/bench/scaling-child.js crawl|timeline|usage|exports N
// prints one JSON line. The parent (bench/scaling.ts) runs every point and draws the curves.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount, createKey } from '../src/accounts/accounts-repo.js';
import { loadConfig } from '../src/config/config.js';
import { grant } from '../src/credits/credits-repo.js';
import { buildApp } from '../src/http/app.js';
import { DemoSource } from '../src/sources/demo/demo-source.js';
import { buildSource } from '../src/sources/build-source.js';
import { silentLog } from '../src/sources/types.js';
import { isActive } from '../src/sources/demo/users.js';
import { startBackground } from '../src/wiring/background.js';
import { buildDeps, closeDeps, type Deps } from '../src/wiring/deps.js';
import { withPeakRss } from './fixtures.js';

const [kind, nText] = process.argv.slice(2);
const n = Number(nText);
const dir = mkdtempSync(join(tmpdir(), `sdg-scaling-${kind}-`));
const plans = join(dir, 'plans.json');

/**
 * SCALING_WRITE_EVERY_MS (crawl only): a grouped write due every that many ms while the first cycle
 * runs, as an API charge's settle would be (an insert into a scratch table, committed through the
 * store's group commit), each timed from when it was due: what a charged call arriving then waits
 * for its commit, the event loop's delay included. Open loop, so a slow moment is sampled as often
 * as a fast one. Off by default: the table does not use it.
 */
function groupedWriteProbe(deps: Deps, everyMs: number): { stop(): Promise<Record<string, number>> } {
  const sqlite = deps.store.sqlite!;
  sqlite.exec('create table if not exists bench_probe_writes (due real not null)');
  const insert = sqlite.prepare('insert into bench_probe_writes (due) values (?)');
  const waits: number[] = [];
  const pending: Promise<void>[] = [];
  let due = performance.now();
  const timer = setInterval(() => {
    for (const now = performance.now(); due <= now; due += everyMs) {
      const at = due;
      pending.push(deps.store.grouped!(() => insert.run(at)).then(() => void waits.push(performance.now() - at)));
    }
  }, 1);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      waits.sort((a, b) => a - b);
      const q = (f: number) => Math.round(waits[Math.min(waits.length - 1, Math.floor(waits.length * f))]! * 10) / 10;
      return { probeWrites: waits.length, probeWaitP50Ms: q(0.5), probeWaitP90Ms: q(0.9), probeWaitP99Ms: q(0.99), probeWaitMaxMs: q(1) };
    },
  };
}

/** Median of the durations of `count` runs of `fn` (ms). */
async function median(count: number, fn: (i: number) => Promise<void>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await fn(i);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return Math.round(times[Math.floor(times.length / 2)]! * 1000) / 1000;
}

/** Fills `table` with `rows` rows by one INSERT … SELECT over a recursive counter, in chunks of a million. */
function fill(deps: Deps, rows: number, insert: (from: number, to: number) => string): void {
  const db = deps.store.sqlite!;
  for (let from = 0; from < rows; from += 1_000_000) {
    const to = Math.min(rows, from + 1_000_000);
    db.exec('begin');
    db.exec(insert(from, to));
    db.exec('commit');
  }
  // Measure the pages, not the seed's aftermath: the seed leaves a large WAL that the checkpoint
  // worker copies back in the background, and measuring during that copy slowed the middle page of
  // 10^7 export records by half (6.6 ms against 4.4 ms measured again right after, 2026-11-26).
  db.pragma('wal_checkpoint(TRUNCATE)');
}

// The same network as the served source (which is wrapped in the resilience layer), for its account ids.
const demoOf = (config: ReturnType<typeof loadConfig>) => new DemoSource({ seed: config.source.demo.seed, userCount: config.source.demo.userCount });

const counter = (from: number, to: number) => `with recursive c(i) as (select ${from} union all select i + 1 from c where i + 1 < ${to})`;

async function main(): Promise<Record<string, unknown>> {
  // A plan whose watchlist takes every account of the largest crawl point.
  writeFileSync(plans, JSON.stringify([{ id: 'scale', name: 'Scale', priceCents: 0, currency: 'USD', credits: 0, watchlistLimit: 1_000_000, rateLimitPerMinute: 100_000_000, description: 'Benchmark' }]));
  const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', PLANS_FILE: plans });
  const deps = await buildDeps(config);
  const db = deps.store.db;
  const { accountId } = await createAccount(db, { name: 'scale', planId: 'scale', rateLimitPerMinute: 100_000_000 });
  await grant(db, accountId, 1_000_000_000_000, 'bench');
  const key = (await createKey(db, accountId, 'bench')).key;
  const headers = { 'x-api-key': key };
  try {
    if (kind === 'crawl') {
      // N active accounts of the demo network on the watchlist, then two whole crawl cycles: the
      // first backfills every account (CRAWL_BACKFILL_DAYS), the second is the next scheduled one.
      // The served source, on a clock that can jump one crawl interval ahead for the second cycle (the
      // service's clock and the network's move together).
      let offsetMs = 0;
      const now = () => new Date(Date.now() + offsetMs);
      deps.source = await buildSource(config, deps.store, silentLog, { now });
      deps.bulk.clock = now;
      const demo = demoOf(config);
      const ids: string[] = [];
      for (let i = 0; ids.length < n && i < demo.net.userCount; i++) if (isActive(demo.net, i)) ids.push(demo.net.userIds.encode(i));
      const addedAt = now().toISOString();
      for (let i = 0; i < ids.length; i += 500) {
        await db.insertInto('watchlist_entries').values(ids.slice(i, i + 500).map((id) => ({ account_id: accountId, social_user_id: id, username: `u${id}`, added_at: addedAt }))).execute();
      }
      await db.insertInto('watchlist_counts').values({ account_id: accountId, entries: ids.length }).execute();
      // One cycle, run by the worker and scheduler roles as `npm start` runs them, until `completed`
      // cycles are done. The shipped poll interval (JOBS_POLL_MS): the scheduler marks a cycle
      // complete at its first poll after the last account, so the time is taken to that account's end.
      const cycle = async (completed: number) => {
        const t = now().getTime();
        // Failures are printed: a failing task would otherwise look like a cycle that never ends.
        const bg = await startBackground(deps, { roles: ['worker', 'scheduler'], log: { info() {}, warn: (o: object, m: string) => console.error(m, o), error: (o: object, m: string) => console.error(m, o) } });
        for (;;) {
          const c = await db.selectFrom('crawl_cycles').select((eb) => eb.fn.countAll().as('n')).where('status', '=', 'completed').executeTakeFirstOrThrow();
          if (Number(c.n) >= completed) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        await bg.stop();
        const row = await db.selectFrom('crawl_cycles').selectAll().where('status', '=', 'completed').orderBy('completed_at', 'desc').limit(1).executeTakeFirstOrThrow();
        const last = await db.selectFrom('crawl_targets').select((eb) => eb.fn.max('completed_at').as('at')).where('cycle_id', '=', row.id).executeTakeFirstOrThrow();
        return { seconds: Math.round((Date.parse(String(last.at)) - t) / 10) / 100, ingested: row.tweets_ingested, updated: row.tweets_updated };
      };
      const loop = monitorEventLoopDelay({ resolution: 10 });
      const { result, peakRss, baselineRss } = await withPeakRss(async () => {
        // The first cycle backfills every account; the next, one CRAWL_INTERVAL_HOURS later, is the
        // routine: the interval's new tweets, and the metrics of the last CRAWL_REFRESH_DAYS' tweets.
        loop.enable();
        const everyMs = Number(process.env.SCALING_WRITE_EVERY_MS ?? 0);
        const probe = everyMs > 0 && deps.store.sqlite ? groupedWriteProbe(deps, everyMs) : undefined;
        const first = await cycle(1);
        const probed = (await probe?.stop()) ?? {};
        loop.disable();
        offsetMs += config.crawl.intervalHours * 3_600_000;
        const next = await cycle(2);
        return { first, next, probed };
      });
      const tweets = Number((await db.selectFrom('tweets').select((eb) => eb.fn.countAll().as('c')).executeTakeFirstOrThrow()).c);
      return {
        kind,
        n,
        seconds: result.first.seconds,
        tweets: result.first.ingested,
        nextSeconds: result.next.seconds,
        nextIngested: result.next.ingested,
        nextUpdated: result.next.updated,
        storedAfter: tweets,
        peakRssMb: Math.round(peakRss / 1_048_576),
        baselineRssMb: Math.round(baselineRss / 1_048_576),
        // How long the event loop (which API requests share in `npm start`) was held during the
        // first cycle: the delay of a 10 ms timer, in ms.
        loopP50Ms: Math.round(loop.percentile(50) / 1e4) / 100,
        loopP99Ms: Math.round(loop.percentile(99) / 1e4) / 100,
        loopMaxMs: Math.round(loop.max / 1e4) / 100,
        ...result.probed,
      };
    }

    const app = await buildApp(deps, { logger: false });
    await app.ready();
    const get = async (url: string) => {
      const res = await app.inject({ url, headers });
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      return JSON.parse(res.body) as { items?: unknown[] };
    };
    // A page deep in the list must be a whole page: a cursor the route no longer reads as ours would
    // otherwise measure an error or an empty page.
    const fullPage = (body: { items?: unknown[] }): void => {
      if (body.items?.length !== 100) throw new Error(`expected a page of 100, got ${body.items?.length}`);
    };
    // Requests before the measured ones: after a seed, the first round of requests ran up to twice
    // as slow as later ones, and one warm-up request left that in the median (2026-11-26: the
    // exports middle page at 10^7, 1.9 to 2.8 ms in a first round of 200, 1.3 to 1.6 after).
    // The timeline's warm-up reads accounts of its own (WARM / 2), as each request needs a new one.
    const WARM = 50;
    const warmUp = async (urls: string[]) => {
      for (let i = 0; i < WARM; i++) for (const url of urls) await get(url);
    };
    const seed0 = performance.now();
    if (kind === 'timeline') {
      // N stored tweets by other authors; then first timeline pages of accounts not yet read: each
      // asks the source for 100 tweets and writes them into a table of N rows.
      fill(deps, n, (from, to) => `${counter(from, to)} insert into tweets (id, seq, author_id, created_at, data, metrics, fetched_at)
        select 'x' || i, printf('%020d', i), 'a' || (i % 10000), strftime('%Y-%m-%dT%H:%M:%fZ', 1700000000 + i, 'unixepoch'),
               '{"id":"x' || i || '","text":"seeded tweet ' || i || '","authorId":"a' || (i % 10000) || '"}', '{}', '2025-01-01T00:00:00.000Z' from c`);
      const seedSeconds = (performance.now() - seed0) / 1000;
      const demo = demoOf(config);
      const users: string[] = [];
      // Each request reads an account not read before (its first page comes from the source).
      const warm = WARM / 2;
      for (let i = 0; users.length < warm + 50 && i < demo.net.userCount; i++) if (isActive(demo.net, i)) users.push(demo.net.userIds.encode(i));
      for (let i = 0; i < warm; i++) await get(`/social/v1/users/${users[i]}/tweets?limit=100`);
      const { result: ms, peakRss, baselineRss } = await withPeakRss(() => median(50, (i) => get(`/social/v1/users/${users[warm + i]}/tweets?limit=100`).then(() => undefined)));
      return { kind, n, firstPageMs: ms, seedSeconds: Math.round(seedSeconds), peakRssMb: Math.round(peakRss / 1_048_576), baselineRssMb: Math.round(baselineRss / 1_048_576) };
    }
    if (kind === 'usage') {
      // N ledger entries of this account (plus its grant); the first page and a page in the middle.
      fill(deps, n, (from, to) => `${counter(from, to)} insert into ledger_entries (account_id, kind, amount, balance_after, request_id, key_id, endpoint, note, created_at)
        select '${accountId}', 'charge', -1, 1000000000000 - i, 'req' || i, null, 'getTweet', null, strftime('%Y-%m-%dT%H:%M:%fZ', 1700000000 + i, 'unixepoch') from c`);
      const seedSeconds = (performance.now() - seed0) / 1000;
      const middle = Number((await db.selectFrom('ledger_entries').select((eb) => eb.fn.max('id').as('m')).executeTakeFirstOrThrow()).m) - Math.floor(n / 2);
      // As the route makes it: the position is the entry's time and opaque id (led_…).
      const createdAt = (await db.selectFrom('ledger_entries').select('created_at').where('id', '=', middle).executeTakeFirstOrThrow()).created_at;
      const cursor = deps.cursors.encode(`usage:${accountId}`, { after: deps.ledgerIds.encode(middle), createdAt });
      await warmUp(['/api/v1/usage?limit=100', `/api/v1/usage?limit=100&cursor=${encodeURIComponent(cursor)}`]);
      const { result, peakRss, baselineRss } = await withPeakRss(async () => ({
        first: await median(50, () => get('/api/v1/usage?limit=100').then(() => undefined)),
        middle: await median(50, () => get(`/api/v1/usage?limit=100&cursor=${encodeURIComponent(cursor)}`).then(fullPage)),
      }));
      return { kind, n, firstPageMs: result.first, middlePageMs: result.middle, seedSeconds: Math.round(seedSeconds), peakRssMb: Math.round(peakRss / 1_048_576), baselineRssMb: Math.round(baselineRss / 1_048_576) };
    }
    if (kind === 'exports') {
      // N export records of this account (completed, as the list shows them); first and middle page.
      fill(deps, n, (from, to) => `${counter(from, to)} insert into exports (id, account_id, status, start_date, end_date, format, tweet_count, size_bytes, sha256, object_key, created_at, started_at, completed_at, error, attempts)
        select printf('%d', 100000000000 + i), '${accountId}', 'completed', '2025-01-01T00:00:00.000Z', '2025-01-02T00:00:00.000Z', 'jsonl.gz', 10, 1000,
               '${'0'.repeat(64)}', 'exports/' || i || '.jsonl.gz', strftime('%Y-%m-%dT%H:%M:%fZ', 1700000000 + i, 'unixepoch'), null, null, null, 1 from c`);
      const seedSeconds = (performance.now() - seed0) / 1000;
      const mid = 100_000_000_000 + Math.floor(n / 2);
      const cursor = deps.cursors.encode(`exports:${accountId}`, { createdAt: new Date((1_700_000_000 + (mid - 100_000_000_000)) * 1000).toISOString(), id: String(mid) });
      await warmUp(['/social/v1/bulk-export/exports?limit=100', `/social/v1/bulk-export/exports?limit=100&cursor=${encodeURIComponent(cursor)}`]);
      const { result, peakRss, baselineRss } = await withPeakRss(async () => ({
        first: await median(50, () => get('/social/v1/bulk-export/exports?limit=100').then(() => undefined)),
        middle: await median(50, () => get(`/social/v1/bulk-export/exports?limit=100&cursor=${encodeURIComponent(cursor)}`).then(fullPage)),
      }));
      return { kind, n, firstPageMs: result.first, middlePageMs: result.middle, seedSeconds: Math.round(seedSeconds), peakRssMb: Math.round(peakRss / 1_048_576), baselineRssMb: Math.round(baselineRss / 1_048_576) };
    }
    throw new Error(`unknown kind ${kind}`);
  } finally {
    await closeDeps(deps);
  }
}

try {
  console.log(JSON.stringify(await main()));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
