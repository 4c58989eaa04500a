// Timeline filters on SOURCE=bluesky. The AppView's author feed takes no time or id bounds, so the
// source applies them while it walks the feed: the source on its own (untilId, with sinceId and
// times), then the gateway over the fake AppView served on loopback, on each store.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { SocialProfile, Tweet } from '../../src/domain/models.js';
import { getBalance } from '../../src/credits/credits-repo.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { buildWorld, serveAppView, T0, type World } from './world.js';

const H = 3_600_000;

interface PageBody {
  items: Tweet[];
  hasNextPage: boolean;
  nextCursor: string | null;
}

describe('Bluesky source: untilId', () => {
  test('exclusive, alone and with sinceId and times; paged without repeats', async () => {
    const w = buildWorld();
    const uid = (await w.source.getUserByUsername('alice.test')).id;
    const all = (await w.source.getUserTweets(uid, { limit: 100 })).items;
    assert.ok(all.length >= 6);
    const until = await w.source.getUserTweets(uid, { limit: 100, untilId: all[1]!.id });
    assert.deepEqual(until.items.map((t) => t.id), all.slice(2).map((t) => t.id));
    const both = await w.source.getUserTweets(uid, { limit: 100, untilId: all[1]!.id, sinceId: all[5]!.id });
    assert.deepEqual(both.items.map((t) => t.id), all.slice(2, 5).map((t) => t.id));
    const withTime = await w.source.getUserTweets(uid, { limit: 100, untilId: all[1]!.id, startTime: new Date(all[3]!.createdAt) });
    assert.deepEqual(withTime.items.map((t) => t.id), all.slice(2, 4).map((t) => t.id));

    const walked: Tweet[] = [];
    let after: string | undefined;
    for (let i = 0; i < 20; i++) {
      const page = await w.source.getUserTweets(uid, { limit: 1, untilId: all[1]!.id, sinceId: all[5]!.id, ...(after ? { after } : {}) });
      walked.push(...page.items);
      after = page.next;
      if (!after) break;
    }
    assert.deepEqual(walked.map((t) => t.id), all.slice(2, 5).map((t) => t.id));
  });
});

for (const backend of backends()) {
  describe(`timeline filters on SOURCE=bluesky through the gateway (${backend})`, () => {
    let w: World;
    let server: Server;
    let h: Harness;
    let a: TestAccount;
    let alice: SocialProfile;
    const get = (url: string) => h.app.inject({ url, headers: { 'x-api-key': a.apiKey } });
    const walk = async (query: string) => {
      const items: Tweet[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages < 20; pages++) {
        const r = await get(`/social/v1/users/${alice.id}/tweets?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.equal(r.statusCode, 200, r.body);
        const b = json<PageBody>(r);
        items.push(...b.items);
        cursor = b.nextCursor;
        if (!cursor) return items;
      }
      assert.fail('the walk did not end');
    };

    before(async () => {
      w = buildWorld();
      const s = await serveAppView(w);
      server = s.server;
      h = await startHarness(backend, { SOURCE: 'bluesky', BLUESKY_APPVIEW_URL: s.url });
      a = await h.account({ credits: 1_000_000 });
      alice = json<{ data: SocialProfile }>(await get('/social/v1/users/by/username/alice.test')).data;
    });
    after(async () => {
      await h.close();
      await new Promise((resolve) => server.close(resolve));
    });

    test('a time window and an id range: exactly those tweets of the unfiltered timeline, page after page', async () => {
      const all = await walk('limit=100');
      const start = new Date(T0).toISOString();
      const end = new Date(T0 + 5 * H).toISOString();
      const expected = all.filter((t) => t.createdAt >= start && t.createdAt < end);
      assert.ok(expected.length >= 3 && expected.length < all.length);
      assert.deepEqual((await walk(`limit=2&startTime=${start}&endTime=${end}`)).map((t) => t.id), expected.map((t) => t.id));
      const ids = await walk(`limit=2&sinceId=${all[5]!.id}&untilId=${all[0]!.id}`);
      assert.deepEqual(ids.map((t) => t.id), all.slice(1, 5).map((t) => t.id));
    });

    test('bad filters are 400 without a call to the AppView, and free', async () => {
      const calls = w.appView.calls.length;
      const before = (await getBalance(h.deps.store.db, a.accountId))!.balance;
      for (const q of ['startTime=2025-05-01', 'endTime=2025-05-01T12:00:00', 'untilId=abc', `startTime=${new Date(T0).toISOString()}&endTime=${new Date(T0).toISOString()}`]) {
        const r = await get(`/social/v1/users/${alice.id}/tweets?${q}`);
        assert.equal(r.statusCode, 400, q);
        assert.equal(errorOf(r).code, 'invalid_request');
      }
      assert.equal(w.appView.calls.length, calls);
      assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, before);
    });
  });
}
