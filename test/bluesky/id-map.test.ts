import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MemoryIdMap, StoreIdMap, type IdMap } from '../../src/sources/bluesky/id-map.js';
import { postIdCandidate, tieFromCid } from '../../src/sources/bluesky/ids.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';
import { cidFor } from './fake-appview.js';

const T = Date.parse('2025-03-04T05:06:07.890Z');
const uri = (n: number) => `at://did:plc:author${n % 3}/app.bsky.feed.post/rkey${n}`;

function contract(name: string, make: () => Promise<{ map: IdMap; reserve: (uri: string, id: string) => Promise<void>; done?: () => Promise<void> }>) {
  describe(`IdMap: ${name}`, () => {
    let map: IdMap;
    let reserve: (uri: string, id: string) => Promise<void>;
    let done: (() => Promise<void>) | undefined;
    before(async () => ({ map, reserve, done } = await make()));
    after(async () => done?.());

    test('assigns once: the same URI always gets the same id, whatever time it is given later', async () => {
      const first = await map.postIds([{ uri: uri(1), cid: cidFor(uri(1)), atMs: T }]);
      const again = await map.postIds([{ uri: uri(1), atMs: T + 86_400_000 }]);
      assert.equal(again.get(uri(1)), first.get(uri(1)));
      assert.equal(await map.postUri(first.get(uri(1))!), uri(1));
      assert.equal(first.get(uri(1)), postIdCandidate(T, tieFromCid(cidFor(uri(1)))!, 0), 'the snowflake of its time and CID');
    });

    test('reverse lookups; an id never assigned is undefined', async () => {
      const users = await map.userIds(['did:plc:alice', 'did:plc:bob', 'did:plc:alice']);
      assert.equal(users.size, 2);
      assert.equal(await map.userDid(users.get('did:plc:bob')!), 'did:plc:bob');
      assert.equal(await map.userDid('12345'), undefined);
      assert.equal(await map.postUri('12345'), undefined);
      assert.deepEqual(await map.userIds(['did:plc:alice']), new Map([['did:plc:alice', users.get('did:plc:alice')!]]));
    });

    test('a collision takes the next value', async () => {
      const cid = cidFor('collide');
      const taken = postIdCandidate(T, tieFromCid(cid)!, 0);
      await reserve('at://did:plc:other/app.bsky.feed.post/taken', taken);
      await reserve('at://did:plc:other/app.bsky.feed.post/taken2', postIdCandidate(T, tieFromCid(cid)!, 1));
      const got = await map.postIds([{ uri: uri(2), cid, atMs: T }]);
      assert.equal(got.get(uri(2)), postIdCandidate(T, tieFromCid(cid)!, 2));
      assert.equal(await map.postUri(taken), 'at://did:plc:other/app.bsky.feed.post/taken');
    });

    test('two URIs of one batch with the same candidate both get ids, distinct', async () => {
      const cid = cidFor('same');
      const got = await map.postIds([
        { uri: uri(3), cid, atMs: T + 5 },
        { uri: uri(4), cid, atMs: T + 5 },
      ]);
      assert.equal(got.size, 2);
      assert.notEqual(got.get(uri(3)), got.get(uri(4)));
    });

    test('concurrent assignments of overlapping batches agree, and ids stay unique', async () => {
      const refs = Array.from({ length: 120 }, (_, i) => ({ uri: uri(100 + i), cid: cidFor(uri(100 + i)), atMs: T + (i % 7) }));
      const results = await Promise.all(Array.from({ length: 6 }, (_, k) => map.postIds(refs.slice(k * 10, k * 10 + 60))));
      const seen = new Map<string, string>();
      for (const r of results) {
        for (const [u, id] of r) {
          if (seen.has(u)) assert.equal(seen.get(u), id, u);
          seen.set(u, id);
        }
      }
      assert.equal(new Set(seen.values()).size, seen.size);
      for (const [u, id] of seen) assert.equal(await map.postUri(id), u);
    });

    test('an empty batch is fine', async () => {
      assert.equal((await map.postIds([])).size, 0);
      assert.equal((await map.userIds([])).size, 0);
    });
  });
}

contract('in memory', async () => {
  const map = new MemoryIdMap();
  return { map, reserve: async (u, id) => map.reservePost(u, id) };
});

for (const backend of backends()) {
  contract(`store (${backend})`, async () => {
    const ts: TestStore = await createTestStore(backend);
    await migrateToLatest(ts.store);
    return {
      map: new StoreIdMap(ts.store.db),
      reserve: async (u, id) => {
        await ts.store.db.insertInto('bluesky_post_ids').values({ id, uri: u }).execute();
      },
      done: () => ts.dispose(),
    };
  });
}
