// What a stored tweet costs as the tweets table grows, storage alone: the crawl's first cycle over N
// accounts (250 tweets each, spread over 7 days, written newest first in pages of 100, 8 accounts'
// pages to a commit as CRAWL_CONCURRENCY's workers share the group commit) into the tweets table and
// its indexes as migration 002 makes them, with the busy writer's settings (WAL, checkpoints in a
// worker, 64 MB page cache, writes held while it resets a large WAL; until 2026-11-29 without the
// holds) and, since 2026-12-03, the served store's page size (SQLite's 4 KiB before). Prints µs a
// tweet for each window of 250,000 tweets (and how many of them the writes were held), and the time
// the holds took.
//   node --import tsx bench/index-growth.ts [accounts, default 10000]
// Variants, to tell where the growth comes from (VARIANT=...):
//   current          the schema as shipped
//   no-time-index    without the (created_at, seq) index that exports scan by time
//   integer-keys     created_at and seq as integers (smaller index entries)
//   cache-256        a 256 MB page cache instead of 64 MB
//   mmap             the database file read through a memory map (PRAGMA mmap_size, 4 GiB) rather
//                    than a read() into the page cache for every page the cache misses
//   staged           new tweets go to a small staging table (indexed alike), merged into tweets in
//                    time order once it holds STAGE_SHARE of the table's rows (at least STAGE_MIN)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { BusyWriter } from '../src/db/busy-writer.js';
import { DEFAULT_SQLITE_PAGE_SIZE } from '../src/db/connect.js';

const accounts = Number(process.argv[2] ?? 10_000);
const variant = process.env.VARIANT ?? 'current';
const PER_ACCOUNT = 250;
const PAGE = 100;
const CONCURRENT = 8;
const WINDOW = 250_000;
const SPAN_MS = 7 * 86_400_000;
const NOW = Date.UTC(2026, 10, 20);

const dir = mkdtempSync(join(tmpdir(), 'sdg-index-growth-'));
const path = join(dir, 'db.sqlite');
const db = new SQLite(path);
db.pragma(`page_size = ${DEFAULT_SQLITE_PAGE_SIZE}`);
db.pragma('journal_mode = WAL');
if (variant === 'mmap') db.pragma('mmap_size = 4294967296');
db.pragma('synchronous = NORMAL');
db.pragma('temp_store = MEMORY');
const integer = variant === 'integer-keys';
db.exec(`create table tweets (id text primary key, seq ${integer ? 'integer' : 'text'} not null, author_id text not null,
  created_at ${integer ? 'integer' : 'text'} not null, data text not null, metrics text not null, fetched_at text not null)`);
db.exec('create index tweets_author_idx on tweets (author_id, created_at, seq)');
if (variant !== 'no-time-index') db.exec('create index tweets_created_idx on tweets (created_at, seq)');
// The busy writer holds the crawl's grouped writes while it resets a large WAL, as in the served
// store (connect.ts): here the holds pause the loop below between commits (the crawl's pages are
// 'bulk' writes, so either scope holds them).
let holds = 0;
let released: (() => void) | undefined;
const busy = new BusyWriter(db, path, {
  holdWrites: () => {
    holds++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--holds === 0) released?.();
    };
  },
});
let heldMs = 0;
async function whileHeld(): Promise<void> {
  if (holds === 0) return;
  const t = performance.now();
  while (holds > 0) await new Promise<void>((r) => (released = r));
  released = undefined;
  heldMs += performance.now() - t;
}
db.pragma(`cache_size = -${(variant === 'cache-256' ? 256 : 64) * 1024}`);
const staged = variant === 'staged';
if (staged) {
  db.exec(`create table tweets_incoming (id text primary key, seq text not null, author_id text not null,
    created_at text not null, data text not null, metrics text not null, fetched_at text not null)`);
  db.exec('create index incoming_author_idx on tweets_incoming (author_id, created_at, seq)');
  db.exec('create index incoming_created_idx on tweets_incoming (created_at, seq)');
}
const STAGE_SHARE = Number(process.env.STAGE_SHARE ?? 0.05);
const STAGE_MIN = Number(process.env.STAGE_MIN ?? 20_000);
const insert = staged
  ? db.prepare(
      'insert into tweets_incoming (id, seq, author_id, created_at, data, metrics, fetched_at) select @i, @q, @a, @c, @d, @m, @f where not exists (select 1 from tweets where id = @i) on conflict (id) do nothing',
    )
  : db.prepare('insert into tweets (id, seq, author_id, created_at, data, metrics, fetched_at) values (?, ?, ?, ?, ?, ?, ?) on conflict (id) do nothing');
let stagedRows = 0;
let mainRows = 0;
let mergeMs = 0;
function mergeIfDue(): void {
  if (!staged || stagedRows < Math.max(STAGE_MIN, mainRows * STAGE_SHARE)) return;
  const t = performance.now();
  db.exec('begin');
  const n = db.prepare('insert into tweets select id, seq, author_id, created_at, data, metrics, fetched_at from tweets_incoming order by created_at, seq').run().changes;
  db.exec('delete from tweets_incoming');
  db.exec('commit');
  mainRows += n;
  stagedRows = 0;
  mergeMs += performance.now() - t;
}

/** One account's backfill, newest first: demo-like snowflake ids (time in the high bits). */
function backfill(account: number): Array<{ id: string; ms: number }> {
  const out: Array<{ id: string; ms: number }> = [];
  let s = (account * 2_654_435_761) >>> 0;
  for (let k = 0; k < PER_ACCOUNT; k++) {
    s = (s * 1_103_515_245 + 12_345) >>> 0;
    const ms = NOW - Math.floor(((k + (s % 1000) / 1000) / PER_ACCOUNT) * SPAN_MS);
    out.push({ id: String(BigInt(ms - 1.6e12) * 8_388_608n + BigInt(account * 8 + (k % 8))), ms });
  }
  return out.sort((a, b) => b.ms - a.ms);
}

const text = 'x'.repeat(450);
const started = performance.now();
let windowStart = started;
let windowHeldMs = 0;
let written = 0;
for (let first = 0; first < accounts; first += CONCURRENT) {
  const group: Array<Array<{ id: string; ms: number }>> = [];
  for (let a = first; a < Math.min(accounts, first + CONCURRENT); a++) group.push(backfill(a));
  for (let page = 0; page * PAGE < PER_ACCOUNT; page++) {
    db.exec('begin');
    group.forEach((tweets, g) => {
      for (const t of tweets.slice(page * PAGE, (page + 1) * PAGE)) {
        const seq = integer ? BigInt(t.id) : t.id.padStart(20, '0');
        const created = integer ? t.ms : new Date(t.ms).toISOString();
        const args = [t.id, seq, String(1_000_000 + first + g), created, `{"id":"${t.id}","text":"${text}"}`, '{"likes":1,"retweets":2}', '2026-11-20T00:00:00.000Z'] as const;
        if (staged) insert.run({ i: args[0], q: args[1], a: args[2], c: args[3], d: args[4], m: args[5], f: args[6] });
        else insert.run(...args);
        if (++written % WINDOW === 0) {
          const now = performance.now();
          const held = heldMs - windowHeldMs;
          console.log(`${written} tweets: ${(((now - windowStart) * 1000) / WINDOW).toFixed(1)} µs a tweet over the last ${WINDOW}, ${((held * 1000) / WINDOW).toFixed(1)} of them held`);
          windowStart = now;
          windowHeldMs = heldMs;
        }
      }
    });
    db.exec('commit');
    if (staged) stagedRows += group.reduce((n, tweets) => n + tweets.slice(page * PAGE, (page + 1) * PAGE).length, 0);
    mergeIfDue();
    // The checkpoint worker and the busy writer's timers run between commits, as between turns.
    await new Promise((r) => setImmediate(r));
    await whileHeld();
  }
}
const ms = performance.now() - started;
if (staged) console.log(`merges: ${(mergeMs / 1000).toFixed(1)} s in all`);
console.log(`held by the WAL's resets: ${(heldMs / 1000).toFixed(1)} s in all`);
console.log(`${variant}, ${accounts} accounts: ${written} tweets in ${(ms / 1000).toFixed(1)} s, ${((ms * 1000) / written).toFixed(1)} µs a tweet`);
await busy.close();
db.close();
rmSync(dir, { recursive: true, force: true });
