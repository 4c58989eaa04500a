// The busy-writer settings of SQLite (src/db/busy-writer.ts): many writes move checkpoints to a
// worker; only a bulk ingest of tweets grows the page cache (a busy ledger would just fill it).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts-repo.js';
import { tweetStoreFor } from '../../src/social/tweet-store.js';
import { createTestStore } from '../helpers/backends.js';
import { demoTweets } from '../../bench/fixtures.js';

describe('SQLite busy writer', () => {
  test('ledger writes start the checkpoint worker but keep the default cache; a tweet ingest grows it', async () => {
    const ts = await createTestStore('sqlite');
    try {
      const { migrateToLatest } = await import('../../src/db/migrate.js');
      await migrateToLatest(ts.store);
      const sqlite = ts.store.sqlite!;
      const defaultCache = sqlite.pragma('cache_size', { simple: true });
      const { accountId } = await createAccount(ts.store.db, { name: 'b', planId: 'free' });
      const insert = sqlite.prepare("insert into ledger_entries (account_id, kind, amount, balance_after, request_id, key_id, endpoint, note, created_at) values (?, 'charge', -1, 0, ?, null, 'e', null, '2025-01-01T00:00:00.000Z')");
      sqlite.transaction(() => {
        for (let i = 0; i < 5_000; i++) insert.run(accountId, `r${i}`);
      })();
      await sleep(500);
      // The writer's own checkpoint waits for 256 MiB of WAL whatever the page size: counted as
      // 65,536 frames it let a new store's WAL (16 KiB pages) reach 1 GiB in a crawl.
      assert.equal(sqlite.pragma('page_size', { simple: true }), 16_384);
      assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 16_384, 'the checkpoint worker took over; the backstop is 256 MiB');
      assert.equal(sqlite.pragma('cache_size', { simple: true }), defaultCache, 'ledger writes leave the cache as it was');

      const tweets = await demoTweets(3_000);
      await tweetStoreFor(ts.store).write(tweets, new Date().toISOString());
      await sleep(500);
      assert.equal(sqlite.pragma('cache_size', { simple: true }), -64 * 1024, 'a bulk ingest grows the cache to 64 MB');
    } finally {
      await ts.dispose();
    }
  });
});
