// The embedded store's page size (src/db/connect.ts): a new file is made with 8 KiB pages, or those
// SQLITE_PAGE_SIZE names; a store made with other pages keeps them, its data intact, and goes on
// taking writes, and a server told another size says so at start.
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
import { runSdg, startServer } from '../helpers/processes.js';

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

test('SQLITE_PAGE_SIZE makes new stores with its pages; an existing store keeps its own, and the server warns', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdg-page-'));
  const viaCli = mkdtempSync(join(tmpdir(), 'sdg-page-'));
  try {
    const a = openStore({ dataDir: dir, sqlitePageSize: 16_384 });
    await migrateToLatest(a);
    assert.equal(a.sqlitePageSize, 16_384);
    await a.close();
    assert.equal(pageSize(dir), 16_384);
    // Asked for other pages, the store opens as it is, and says which pages it has.
    const b = openStore({ dataDir: dir, sqlitePageSize: 4_096 });
    assert.equal(b.sqlitePageSize, 16_384);
    await b.close();
    assert.equal(pageSize(dir), 16_384);

    // Through configuration: the command line makes the store, then a server is told other pages.
    await runSdg(['migrate'], { DATA_DIR: viaCli, SQLITE_PAGE_SIZE: '4096' });
    assert.equal(pageSize(viaCli), 4_096);
    const told = await startServer({ DATA_DIR: viaCli, ROLES: 'api', SQLITE_PAGE_SIZE: '16384' });
    await told.stop();
    assert.match(told.output(), /SQLITE_PAGE_SIZE=16384 applies to a new store: this one keeps its 4096-byte pages/);
    const quiet = await startServer({ DATA_DIR: viaCli, ROLES: 'api' });
    await quiet.stop();
    assert.doesNotMatch(quiet.output(), /SQLITE_PAGE_SIZE/);
    assert.equal(pageSize(viaCli), 4_096);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(viaCli, { recursive: true, force: true });
  }
});
