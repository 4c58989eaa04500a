// The embedded store's page size (src/db/connect.ts): a new file is made with 8 KiB pages; a store
// made with SQLite's default 4 KiB pages keeps them, its data intact, and goes on taking writes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { openStore } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { tweetStoreFor } from '../../src/social/tweet-store.js';
import { demoTweets } from '../../bench/fixtures.js';

const pageSize = (dir: string) => {
  const db = new SQLite(join(dir, 'gateway.sqlite'), { readonly: true });
  try {
    return db.pragma('page_size', { simple: true });
  } finally {
    db.close();
  }
};

test('a new store has 8 KiB pages; an existing 4 KiB store keeps its pages and its rows', async () => {
  const fresh = mkdtempSync(join(tmpdir(), 'sdg-page-'));
  const old = mkdtempSync(join(tmpdir(), 'sdg-page-'));
  try {
    const a = openStore({ dataDir: fresh });
    await migrateToLatest(a);
    await a.close();
    assert.equal(pageSize(fresh), 8_192);

    // A store as earlier versions made it: SQLite's default page size.
    const made = new SQLite(join(old, 'gateway.sqlite'));
    made.pragma('journal_mode = WAL');
    made.close();
    assert.equal(pageSize(old), 4_096);
    const b = openStore({ dataDir: old });
    await migrateToLatest(b);
    const tweets = await demoTweets(2_000);
    assert.equal((await tweetStoreFor(b).write(tweets, new Date().toISOString())).inserted, 2_000);
    await b.close();
    assert.equal(pageSize(old), 4_096);
    const c = openStore({ dataDir: old });
    const n = await c.db.selectFrom('tweets').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(n.n), 2_000);
    await c.close();
  } finally {
    rmSync(fresh, { recursive: true, force: true });
    rmSync(old, { recursive: true, force: true });
  }
});
