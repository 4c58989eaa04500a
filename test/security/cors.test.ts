// Calls from web pages of other origins (CORS): off by default; with CORS_ORIGINS, a listed origin's
// preflight is answered without a key and charged nothing, and every answer to it, errors included,
// names the origin and exposes the headers a caller reads. Another origin gets no permission.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { errorOf, startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { demoNoon } from '../helpers/social.js';

const APP = 'https://app.example.com';
const preflight = (h: Harness, url: string, origin: string) =>
  h.app.inject({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key' } });

describe('CORS', () => {
  describe('off by default', () => {
    let h: Harness;
    let a: TestAccount;
    before(async () => {
      h = await startHarness('sqlite');
      a = await h.account({ credits: 1_000 });
    });
    after(() => h.close());

    test('no permission is given to another origin, and a preflight is an unknown route', async () => {
      const r = await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': a.apiKey, origin: APP } });
      assert.equal(r.statusCode, 200);
      assert.equal(r.headers['access-control-allow-origin'], undefined);
      const p = await preflight(h, '/echo/v1/hello', APP);
      assert.equal(p.statusCode, 404);
      assert.equal(errorOf(p).code, 'not_found');
    });
  });

  describe(`with CORS_ORIGINS=${APP}`, () => {
    let h: Harness;
    let a: TestAccount;
    const { sample, tweak } = demoNoon();
    before(async () => {
      h = await startHarness('sqlite', { CORS_ORIGINS: `${APP},http://localhost:5173`, COSTS: JSON.stringify({ getTweet: 100 }) }, tweak);
      a = await h.account({ credits: 150 });
    });
    after(() => h.close());
    const tweet = () => `/social/v1/tweets/${sample.tweetIds[0]}`;

    test('a listed origin: the preflight is answered without a key, charged nothing; the call and its errors name the origin', async () => {
      const p = await preflight(h, tweet(), APP);
      assert.equal(p.statusCode, 204);
      assert.equal(p.headers['access-control-allow-origin'], APP);
      assert.match(String(p.headers['access-control-allow-headers']), /x-api-key/);
      assert.match(String(p.headers['access-control-allow-methods']), /GET/);
      assert.equal(p.headers['access-control-max-age'], '600');
      assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 150, 'nothing charged for a preflight');

      const ok = await h.app.inject({ url: tweet(), headers: { 'x-api-key': a.apiKey, origin: APP } });
      assert.equal(ok.statusCode, 200);
      assert.equal(ok.headers['access-control-allow-origin'], APP);
      assert.match(String(ok.headers.vary), /Origin/);
      const exposed = String(ok.headers['access-control-expose-headers']).split(', ');
      for (const h of ['x-request-id', 'x-credits-charged', 'x-credits-remaining', 'ratelimit-remaining', 'retry-after']) assert.ok(exposed.includes(h), `${h} exposed`);

      // A page reads why a call failed: no key, and credits run out.
      const noKey = await h.app.inject({ url: tweet(), headers: { origin: APP } });
      assert.equal(noKey.statusCode, 401);
      assert.equal(noKey.headers['access-control-allow-origin'], APP);
      const broke = await h.app.inject({ url: tweet(), headers: { 'x-api-key': a.apiKey, origin: APP } });
      assert.equal(broke.statusCode, 402);
      assert.equal(errorOf(broke).code, 'insufficient_credits');
      assert.equal(broke.headers['access-control-allow-origin'], APP);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 50);
    });

    test('another origin gets no permission, on the preflight or the call', async () => {
      const p = await preflight(h, tweet(), 'https://evil.example.net');
      assert.equal(p.headers['access-control-allow-origin'], undefined);
      const r = await h.app.inject({ url: '/api/v1/credits/balance', headers: { 'x-api-key': a.apiKey, origin: 'https://evil.example.net' } });
      assert.equal(r.headers['access-control-allow-origin'], undefined);
      const second = await h.app.inject({ url: '/api/v1/credits/balance', headers: { 'x-api-key': a.apiKey, origin: 'http://localhost:5173' } });
      assert.equal(second.headers['access-control-allow-origin'], 'http://localhost:5173');
    });
  });

  test('CORS_ORIGINS takes origins as a browser sends them, or *', () => {
    assert.equal(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins, '*');
    assert.deepEqual(loadConfig({ CORS_ORIGINS: ' https://a.example.com , http://localhost:3000' }).corsOrigins, ['https://a.example.com', 'http://localhost:3000']);
    assert.equal(loadConfig({ CORS_ORIGINS: '' }).corsOrigins, undefined);
    for (const bad of ['https://a.example.com/', 'a.example.com', 'ftp://a.example.com', 'https://a.example.com/app', '*,https://a.example.com', 'HTTPS://A.example.com']) {
      assert.throws(() => loadConfig({ CORS_ORIGINS: bad }), /CORS_ORIGINS lists origins/, bad);
    }
  });
});
