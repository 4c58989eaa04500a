// The tweet store's write: each tweet counts once, as inserted (new) or updated (stored, metrics
// changed), whatever mix of new, changed and unchanged stored tweets a batch holds; what is stored
// is the tweet as last written.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Tweet } from '../../src/domain/models.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { tweetStoreFor } from '../../src/social/tweet-store.js';
import { DemoSource } from '../../src/sources/demo/demo-source.js';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';

async function someTweets(n: number): Promise<Tweet[]> {
  const source = new DemoSource({ seed: 5, userCount: 2_000, now: () => new Date('2025-06-02T12:00:00.000Z') });
  const out: Tweet[] = [];
  for (let i = 0; out.length < n && i < source.net.userCount; i++) {
    const page = await source.getUserTweets(source.net.userIds.encode(i), { limit: 100 }).catch(() => undefined);
    if (page) out.push(...page.items);
  }
  assert.ok(out.length >= n, 'the demo network has enough tweets');
  return out.slice(0, n);
}

const bump = (t: Tweet): Tweet => ({ ...t, metrics: { ...t.metrics, likes: t.metrics.likes + 1 } });

for (const dialect of backends()) {
  describe(`tweet store (${dialect})`, () => {
    let ts: TestStore;
    let tweets: Tweet[];
    before(async () => {
      ts = await createTestStore(dialect);
      await migrateToLatest(ts.store);
      tweets = await someTweets(400);
    });
    after(() => ts.dispose());

    const stored = async () =>
      new Map((await ts.store.db.selectFrom('tweets').select(['id', 'data', 'metrics']).execute()).map((r) => [r.id, r]));

    test('new tweets in batches of several sizes count as inserted and are stored as given', async () => {
      const store = tweetStoreFor(ts.store);
      assert.deepEqual(await store.write(tweets.slice(0, 127), 'f1'), { inserted: 127, updated: 0 });
      assert.deepEqual(await store.write(tweets.slice(127, 128), 'f1'), { inserted: 1, updated: 0 });
      assert.deepEqual(await store.write(tweets.slice(128, 200), 'f1'), { inserted: 72, updated: 0 });
      const rows = await stored();
      assert.equal(rows.size, 200);
      for (const t of tweets.slice(0, 200)) assert.deepEqual(JSON.parse(rows.get(t.id)!.data), t);
    });

    test('a batch mixing new, changed and unchanged stored tweets counts each once', async () => {
      const store = tweetStoreFor(ts.store);
      // 0-199 stored. The batch: 150 stored of which every third changed, then 103 new, shuffled.
      const stale = tweets.slice(50, 200).map((t, i) => (i % 3 === 0 ? bump(t) : t));
      const fresh = tweets.slice(200, 303);
      const batch = [...stale, ...fresh].sort((a, b) => (a.id < b.id ? -1 : 1));
      assert.deepEqual(await store.write(batch, 'f2'), { inserted: 103, updated: 50 });
      const rows = await stored();
      assert.equal(rows.size, 303);
      for (const t of batch) assert.deepEqual(JSON.parse(rows.get(t.id)!.data), t, `tweet ${t.id} as last written`);
      // The same batch again changes nothing.
      assert.deepEqual(await store.write(batch, 'f3'), { inserted: 0, updated: 0 });
    });

    test('an id repeated within a batch is stored once', async () => {
      const store = tweetStoreFor(ts.store);
      const t = tweets[350]!;
      assert.deepEqual(await store.write([t, bump(t), t], 'f4'), { inserted: 1, updated: 0 });
      assert.equal((await stored()).size, 304);
    });
  });
}
