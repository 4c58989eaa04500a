// SOURCE=bluesky through the gateway's endpoints: the real wiring (build-source, the store-backed id
// map, the resilience layer) against the fake AppView served over HTTP on the loopback interface.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { SocialProfile, Tweet } from '../../src/domain/models.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { buildWorld, serveAppView, type World } from './world.js';
import { notReadyState } from '../helpers/not-ready.js';

interface PageBody<T> {
  items: T[];
  hasNextPage: boolean;
  nextCursor: string | null;
}

for (const backend of backends()) {
  describe(`SOURCE=bluesky through the gateway (${backend})`, () => {
    let w: World;
    let server: Server;
    let h: Harness;
    let a: TestAccount;
    const get = (url: string) => h.app.inject({ url, headers: { 'x-api-key': a.apiKey } });

    before(async () => {
      w = buildWorld();
      const s = await serveAppView(w);
      server = s.server;
      h = await startHarness(backend, { SOURCE: 'bluesky', BLUESKY_APPVIEW_URL: s.url });
      a = await h.account({ credits: 1_000_000 });
    });
    after(async () => {
      await h.close();
      await new Promise((resolve) => server.close(resolve));
    });

    test('profile, timeline pages, tweet, retweeters: numeric ids that read back', async () => {
      assert.equal(h.deps.source.name, 'bluesky');
      const r = await get('/social/v1/users/by/username/alice.test');
      assert.equal(r.statusCode, 200, r.body);
      const alice = json<{ data: SocialProfile }>(r).data;
      assert.match(alice.id, /^[0-9]+$/);

      const walked: Tweet[] = [];
      let cursor: string | null = null;
      do {
        const q: string = cursor ? `?limit=3&cursor=${encodeURIComponent(cursor)}` : '?limit=3';
        const page = await get(`/social/v1/users/${alice.id}/tweets${q}`);
        assert.equal(page.statusCode, 200, page.body);
        const body = json<PageBody<Tweet>>(page);
        walked.push(...body.items);
        cursor = body.nextCursor;
      } while (cursor);
      assert.equal(walked.length, 8);
      assert.equal(new Set(walked.map((t) => t.id)).size, 8);

      const link = walked.find((t) => t.text === w.posts.link.record.text)!;
      const t = await get(`/social/v1/tweets/${link.id}`);
      assert.equal(t.statusCode, 200, t.body);
      assert.equal(json<{ data: Tweet }>(t).data.id, link.id);

      const rts = await get(`/social/v1/tweets/${link.id}/retweeted_by`);
      assert.equal(rts.statusCode, 200, rts.body);
      assert.deepEqual(json<PageBody<SocialProfile>>(rts).items.map((p) => p.username), ['frank.test', 'bob.test']);

      const byId = await get(`/social/v1/users/${alice.id}/tweets?limit=1`);
      assert.equal(json<PageBody<Tweet>>(byId).items[0]!.authorId, alice.id);
      const rows = await h.deps.store.db.selectFrom('bluesky_post_ids').select(({ fn }) => fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.ok(Number(rows.n) >= 8, 'the ids are in the store');
    });

    test('not found, suspended, protected, communities', async () => {
      const cases: Array<[string, number, string]> = [
        ['/social/v1/users/by/username/nobody.test', 404, 'not_found'],
        ['/social/v1/users/by/username/dave.test', 404, 'not_found'],
        ['/social/v1/tweets/12345', 404, 'not_found'],
        ['/social/v1/users/12345/tweets', 404, 'not_found'],
        ['/social/v1/tweets/12345/retweeted_by', 404, 'not_found'],
        ['/social/v1/communities/1', 404, 'not_found'],
      ];
      for (const [url, status, code] of cases) {
        const r = await get(url);
        assert.equal(r.statusCode, status, `${url}: ${r.body}`);
        assert.equal(errorOf(r).code, code);
      }
      const carol = json<{ data: SocialProfile }>(await get('/social/v1/users/by/username/carol.test')).data;
      assert.equal(carol.protected, true);
      const r = await get(`/social/v1/users/${carol.id}/tweets`);
      assert.equal(r.statusCode, 403, r.body);
      assert.equal(errorOf(r).code, 'protected_account');
    });
  });
}

describe('/readyz on SOURCE=bluesky', () => {
  test("ready while the AppView answers its health check; not ready, naming the source, once it cannot be reached", async () => {
    const w = buildWorld();
    const { server, url } = await serveAppView(w);
    const up = await startHarness('sqlite', { SOURCE: 'bluesky', BLUESKY_APPVIEW_URL: url });
    try {
      const ready = await up.app.inject({ url: '/readyz' });
      assert.equal(ready.statusCode, 200, ready.body);
      assert.deepEqual(w.appView.calls, ['_health']);
    } finally {
      await up.close();
      await new Promise((resolve) => server.close(resolve));
    }
    // The same address, nobody listening any more.
    const down = await startHarness('sqlite', { SOURCE: 'bluesky', BLUESKY_APPVIEW_URL: url, SOURCE_TIMEOUT_MS: '2000' });
    try {
      const r = await down.app.inject({ url: '/readyz' });
      assert.equal(r.statusCode, 503, r.body);
      const body = notReadyState(r);
      assert.equal(body.status, 'source unavailable');
      assert.equal(body.source, 'bluesky');
      assert.match(body.reason!, /The Bluesky AppView could not be reached/);
    } finally {
      await down.close();
    }
  });
});
