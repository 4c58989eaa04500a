// Query parameters an operation does not take are refused, on every operation alike: those with
// query parameters refused unknown ones already, those without ignored them (`?expansions=…` on a
// tweet answered the tweet without them). A 400 naming the parameter, before any work, not charged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { backends } from '../helpers/backends.js';
import { errorOf, startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { demoNoon, samplePath } from '../helpers/social.js';

for (const backend of backends()) {
  describe(`unknown query parameters (${backend})`, () => {
    let h: Harness;
    let a: TestAccount;
    const { sample, tweak } = demoNoon();

    before(async () => {
      h = await startHarness(backend, { COSTS: JSON.stringify({ echoHello: 1 }) }, tweak);
      a = await h.account({ credits: 1_000_000 });
    });
    after(() => h.close());

    test('every documented operation answers 400 naming the parameter, and charges nothing', async () => {
      const doc = JSON.parse((await h.app.inject({ url: '/openapi.json' })).body) as { paths: Record<string, Record<string, unknown>> };
      // Bodies that pass validation, so that the query is what fails (Fastify checks the body first).
      const bodies: Record<string, unknown> = {
        '/api/v1/api-keys': { name: 'k' },
        '/social/v1/bulk-export/exports/generate': { startDate: '2026-11-19T00:00:00Z', endDate: '2026-11-20T00:00:00Z' },
        '/social/v1/bulk-export/watchlist/batch': { items: [{ username: sample.usernames[0] }] },
        '/social/v1/bulk-export/watchlist/batch-remove': { socialUserIds: [sample.userIds[0]] },
      };
      const required: Record<string, string> = { '/api/v1/usage/summary': 'from=2026-11-19T00:00:00Z&to=2026-11-20T00:00:00Z&' };
      const start = (await getBalance(h.deps.store.db, a.accountId))!.balance;
      let calls = 0;
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const method of ['get', 'post', 'delete'].filter((m) => m in item)) {
          const url = samplePath(path, sample);
          const payload = method === 'post' ? bodies[path] : undefined;
          if (method === 'post') assert.ok(payload, `a body for POST ${path}`);
          const r = await h.app.inject({ method: method.toUpperCase() as 'GET', url: `${url}?${required[path] ?? ''}expansions=author_id`, headers: { 'x-api-key': a.apiKey }, payload: payload as object });
          calls++;
          assert.equal(r.statusCode, 400, `${method} ${url}: ${r.body}`);
          const e = errorOf(r);
          assert.equal(e.code, 'invalid_request');
          assert.deepEqual(e.details, { fields: [{ field: 'querystring.expansions', message: 'is not an accepted field' }] }, `${method} ${url}`);
          assert.equal(r.headers['x-credits-charged'], '0', `${method} ${url}`);
        }
      }
      assert.ok(calls >= 20, `${calls} operations`);
      const end = (await getBalance(h.deps.store.db, a.accountId))!.balance;
      assert.equal(end, start, 'nothing charged');
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), end);
      const keys = await h.app.inject({ url: '/api/v1/api-keys', headers: { 'x-api-key': a.apiKey } });
      assert.equal((JSON.parse(keys.body) as { items: unknown[] }).items.length, 1, 'no key was made');
    });

    test('the same operations without it still work, and an empty query is no parameter', async () => {
      for (const url of [`/social/v1/tweets/${sample.tweetIds[0]}`, `/social/v1/tweets/${sample.tweetIds[0]}?`, '/echo/v1/hello', '/api/v1/account']) {
        const r = await h.app.inject({ url, headers: { 'x-api-key': a.apiKey } });
        assert.equal(r.statusCode, 200, `${url}: ${r.body}`);
      }
    });
  });
}
