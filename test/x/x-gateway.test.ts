// SOURCE=x end to end: the gateway's endpoints over the X source, built from configuration.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getBalance } from '../../src/credits/credits-repo.js';
import { errorOf, json, startHarness, type Harness } from '../helpers/harness.js';
import { startFixtureServer, TOKEN, type FixtureServer } from './helpers.js';

describe('the gateway on SOURCE=x', () => {
  let h: Harness;
  let x: FixtureServer;
  before(async () => {
    x = await startFixtureServer();
    h = await startHarness('sqlite', { SOURCE: 'x', X_BEARER_TOKEN: TOKEN, X_BASE_URL: x.baseUrl, SOURCE_TIMEOUT_MS: '2000' });
  });
  after(async () => {
    await h.close();
    await x.close();
  });

  test('a tweet is fetched from X, mapped, charged, then served from the store', async () => {
    x.on('/2/tweets/1850000000000000001', { file: 'tweet-long-note.json' });
    const a = await h.account({ credits: 1000 });
    const r = await h.app.inject({ url: '/social/v1/tweets/1850000000000000001', headers: { 'x-api-key': a.apiKey } });
    assert.equal(r.statusCode, 200, r.body);
    const body = json<{ data: { id: string; text: string }; meta: { cached: boolean } }>(r);
    assert.equal(body.data.id, '1850000000000000001');
    assert.equal(body.meta.cached, false);
    assert.equal(x.seen.at(-1)?.authorization, `Bearer ${TOKEN}`);
    const again = await h.app.inject({ url: '/social/v1/tweets/1850000000000000001', headers: { 'x-api-key': a.apiKey } });
    assert.equal(json<{ meta: { cached: boolean } }>(again).meta.cached, true);
    assert.equal(x.count('/2/tweets/1850000000000000001'), 1);
    assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 800);
  });

  test("X's not-found partial error is 404; its 429 is 503 with Retry-After; neither is charged", async () => {
    const a = await h.account({ credits: 1000 });
    x.on('/2/tweets/1999999999999999999', { file: 'errors-tweet-not-found.json' });
    const nf = await h.app.inject({ url: '/social/v1/tweets/1999999999999999999', headers: { 'x-api-key': a.apiKey } });
    assert.equal(nf.statusCode, 404);
    assert.equal(errorOf(nf).code, 'not_found');
    const reset = Math.ceil(Date.now() / 1000) + 120;
    x.on('/2/users/by/username/limited', { status: 429, file: 'problem-429.json', headers: { 'x-rate-limit-limit': '300', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(reset) } });
    const rl = await h.app.inject({ url: '/social/v1/users/by/username/limited', headers: { 'x-api-key': a.apiKey } });
    assert.equal(rl.statusCode, 503);
    assert.equal(errorOf(rl).code, 'upstream_unavailable');
    assert.ok(Number(rl.headers['retry-after']) > 60);
    assert.ok(!rl.body.includes(TOKEN) && !nf.body.includes(TOKEN));
    assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 1000);
  });
});
