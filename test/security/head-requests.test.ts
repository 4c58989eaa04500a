// HEAD on the API. Fastify answers HEAD for every GET route; on a keyed route that would do the call's
// work and charge it for headers alone, for an operation the API does not document. So a HEAD on a
// keyed route answers 404 in the envelope (as DELETE or OPTIONS there do), charged nothing, whatever
// the key; the public pages (health, the landing page, documents, the dashboard) still answer HEAD.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { backends } from '../helpers/backends.js';
import { errorOf, startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { demoNoon, samplePath } from '../helpers/social.js';

for (const backend of backends()) {
  describe(`HEAD requests (${backend})`, () => {
    let h: Harness;
    let a: TestAccount;
    const { sample, tweak } = demoNoon();

    before(async () => {
      h = await startHarness(backend, { COSTS: JSON.stringify({ echoHello: 1 }) }, tweak);
      a = await h.account({ credits: 1_000_000 });
    });
    after(() => h.close());

    test('every documented GET operation: HEAD answers 404 with a request id, and nothing is charged', async () => {
      const doc = JSON.parse((await h.app.inject({ url: '/openapi.json' })).body) as { paths: Record<string, Record<string, unknown>> };
      const gets = Object.entries(doc.paths).filter(([, item]) => 'get' in item).map(([path]) => samplePath(path, sample));
      assert.ok(gets.length >= 10, `${gets.length} GET operations`);
      const start = (await getBalance(h.deps.store.db, a.accountId))!.balance;
      for (const url of gets) {
        const r = await h.app.inject({ method: 'HEAD', url, headers: { 'x-api-key': a.apiKey } });
        assert.equal(r.statusCode, 404, `HEAD ${url}`);
        assert.equal(r.body, '', `HEAD ${url}: no body`);
        assert.match(String(r.headers['x-request-id']), /^req_/, `HEAD ${url}`);
        assert.equal(r.headers['x-credits-charged'], undefined, `HEAD ${url}`);
      }
      assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, start, 'nothing charged');
      // The same calls as GET are charged (so the HEADs above were not free by accident of cost).
      const tweet = await h.app.inject({ url: `/social/v1/tweets/${sample.tweetIds[0]}`, headers: { 'x-api-key': a.apiKey } });
      assert.equal(tweet.statusCode, 200, tweet.body);
      assert.ok(Number(tweet.headers['x-credits-charged']) > 0);
      const echo = await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': a.apiKey } });
      assert.equal(echo.headers['x-credits-charged'], '1');
      const end = (await getBalance(h.deps.store.db, a.accountId))!.balance;
      assert.equal(end, start - Number(tweet.headers['x-credits-charged']) - 1);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), end, 'the ledger sums to the balance');
    });

    test('a HEAD is told 404 before any key is looked at (no 401, no count against the address), as other methods the route lacks are', async () => {
      const get = await h.app.inject({ method: 'GET', url: '/echo/v1/hello', headers: { 'x-api-key': 'sdg_live_unknown' } });
      assert.equal(get.statusCode, 401);
      const head = await h.app.inject({ method: 'HEAD', url: '/echo/v1/hello' });
      assert.equal(head.statusCode, 404);
      const del = await h.app.inject({ method: 'DELETE', url: '/echo/v1/hello', headers: { 'x-api-key': a.apiKey } });
      assert.equal(errorOf(del).code, 'not_found', 'another method the route lacks answers the same');
    });

    test('public pages still answer HEAD', async () => {
      for (const url of ['/healthz', '/', '/openapi.json', '/dashboard/', '/docs/']) {
        const r = await h.app.inject({ method: 'HEAD', url });
        assert.equal(r.statusCode, 200, `HEAD ${url}`);
        assert.equal(r.body, '');
      }
    });
  });
}
