// The Postgres hot path's process-local caches: key lookups (a revocation through one process is
// refused by another within 1 s) and stored tweets (bounded in memory and by CACHE_TWEET_SECONDS).
// Needs TEST_DATABASE_URL (skipped without).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Tweet } from '../../src/domain/models.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { TweetLookup } from '../../src/social/tweet-lookup.js';
import { tweetStoreFor } from '../../src/social/tweet-store.js';
import { createTestStore, type TestStore } from '../helpers/backends.js';
import { runSdg, startServer, type ServerProcess } from '../helpers/processes.js';

const pg = process.env.TEST_DATABASE_URL;

describe('key revocation across API processes (postgres)', { skip: !pg }, () => {
  let ts: TestStore;
  const servers: ServerProcess[] = [];
  before(async () => {
    ts = await createTestStore('postgres');
    await migrateToLatest(ts.store);
    const env = { ...ts.env, ROLES: 'api' };
    servers.push(await startServer(env), await startServer(env));
  });
  after(async () => {
    for (const s of servers) await s.stop();
    await ts.dispose();
  });

  test('a key revoked through one process is refused by the other within 1 s', async () => {
    const [one, two] = servers as [ServerProcess, ServerProcess];
    const created = await runSdg(['accounts', 'create', '--name', 'rv', '--credits', '1000', '--json'], ts.env);
    const { apiKey } = JSON.parse(created.stdout) as { apiKey: string };
    const made = await fetch(`${one.url}/api/v1/api-keys`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: '{"name":"second"}' });
    assert.equal(made.status, 201);
    const second = ((await made.json()) as { data: { id: string; key: string } }).data;
    // Both processes have looked the key up (and keep the lookup).
    for (const s of servers) assert.equal((await fetch(`${s.url}/echo/v1/hello`, { headers: { 'x-api-key': second.key } })).status, 200);
    const revoked = await fetch(`${one.url}/api/v1/api-keys/${second.id}`, { method: 'DELETE', headers: { 'x-api-key': apiKey } });
    assert.equal(revoked.status, 200);
    const t0 = Date.now();
    assert.equal((await fetch(`${one.url}/echo/v1/hello`, { headers: { 'x-api-key': second.key } })).status, 401, 'at once where it was revoked');
    let status = 200;
    while (status === 200 && Date.now() - t0 < 3_000) {
      status = (await fetch(`${two.url}/echo/v1/hello`, { headers: { 'x-api-key': second.key } })).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 20));
    }
    const took = Date.now() - t0;
    assert.equal(status, 401);
    assert.ok(took < 1_000, `refused by the other process after ${took} ms`);
    // The key that made the request still works on both.
    for (const s of servers) assert.equal((await fetch(`${s.url}/echo/v1/hello`, { headers: { 'x-api-key': apiKey } })).status, 200);
  });
});

const tweet = (id: string): Tweet => ({
  id,
  text: `tweet ${id} `.repeat(40),
  authorId: '1',
  createdAt: '2026-01-01T00:00:00.000Z',
  url: `https://x.com/u/status/${id}`,
  language: 'en',
  conversationId: null,
  inReplyTo: null,
  metrics: { retweets: 0, replies: 0, likes: 1, quotes: 0, views: 0, bookmarks: 0 },
  entities: { hashtags: [], urls: [], mentions: [] },
  media: [],
  quotedTweetId: null,
  retweetedTweetId: null,
});

describe('stored tweets cached in the process (postgres)', { skip: !pg }, () => {
  let ts: TestStore;
  before(async () => {
    ts = await createTestStore('postgres');
    await migrateToLatest(ts.store);
  });
  after(() => ts.dispose());

  test('the cache stays within its memory bound and never serves a tweet past CACHE_TWEET_SECONDS', async () => {
    let now = Date.now();
    const fetchedAt = new Date(now).toISOString();
    const ids = Array.from({ length: 200 }, (_, i) => String(1000 + i));
    await tweetStoreFor(ts.store).write(ids.map(tweet), fetchedAt);
    const maxBytes = 40_000;
    const lookup = new TweetLookup(ts.store, { freshSeconds: 60, maxBytes, now: () => now });
    for (const id of ids) assert.ok(await lookup.get(id), id);
    const { entries, bytes } = lookup.size();
    assert.ok(bytes <= maxBytes, `${bytes} bytes held`);
    assert.ok(entries > 5 && entries < ids.length, `${entries} entries held`);
    // The newest stay (answered without the database), the oldest went first.
    assert.ok(lookup.known(ids.at(-1)!));
    assert.equal(lookup.known(ids[0]!), undefined);
    // Once stale, a cached copy is dropped, not served.
    now += 61_000;
    assert.equal(lookup.known(ids.at(-1)!), undefined);
    assert.equal(lookup.size().entries, entries - 1);
    // A stale stored copy is not cached at all (the service fetches a new one).
    assert.ok(await lookup.get(ids.at(-2)!));
    assert.equal(lookup.known(ids.at(-2)!), undefined);
  });

  test('a tweet beyond ASCII is held with its UTF-8 bytes, and they count against the bound', async () => {
    const now = Date.now();
    const t = { ...tweet('2000'), text: 'café ☕ 𝄞 '.repeat(30) };
    await tweetStoreFor(ts.store).write([t], new Date(now).toISOString());
    const lookup = new TweetLookup(ts.store, { freshSeconds: 60, maxBytes: 1 << 20, now: () => now });
    const held = await lookup.get('2000');
    assert.ok(held?.utf8, 'the UTF-8 copy is made once, with the entry');
    assert.equal(held.utf8.toString('utf8'), held.json);
    assert.deepEqual(JSON.parse(held.json), t);
    assert.ok(lookup.size().bytes >= held.json.length * 2 + held.utf8.length, `${lookup.size().bytes} bytes counted`);
    // An ASCII tweet keeps no second copy.
    await tweetStoreFor(ts.store).write([tweet('2001')], new Date(now).toISOString());
    assert.equal((await lookup.get('2001'))?.utf8, undefined);
  });
});
