// Rate limits per key and per account: a 5/min account gets no more calls by creating new keys, on
// the in-process limiter and on Redis (TEST_REDIS_URL), and the 429 names the limit in details.scope.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { MemoryRateLimiter } from '../../src/ratelimit/rate-limiter.js';
import { RedisRateLimiter } from '../../src/ratelimit/redis-rate-limiter.js';
import { errorOf, json, startHarness, type Harness } from '../helpers/harness.js';

const redisUrl = process.env.TEST_REDIS_URL;

describe('takeAll on the in-process limiter', () => {
  test('a request passes only if every bucket has a token, and a refusal spends none', () => {
    const l = new MemoryRateLimiter(() => 0);
    for (let i = 0; i < 3; i++) assert.equal(l.takeAll([{ key: 'k1', perMinute: 10 }, { key: 'a', perMinute: 3 }]).allowed, true);
    const d = l.takeAll([{ key: 'k2', perMinute: 10 }, { key: 'a', perMinute: 3 }]);
    assert.equal(d.allowed, false);
    assert.equal(d.refused, 1);
    assert.equal(d.limit, 3);
    // k2 was not charged by the refused request: it still has its whole burst.
    assert.equal(l.take('k2', 10).remaining, 9);
  });
});

if (redisUrl) {
  describe('takeAll on Redis', () => {
    const prefix = `sdg-test:${randomBytes(4).toString('hex')}:`;
    let a: RedisRateLimiter;
    let b: RedisRateLimiter;
    before(() => {
      a = new RedisRateLimiter(redisUrl, { prefix });
      b = new RedisRateLimiter(redisUrl, { prefix });
    });
    after(async () => {
      await a.close();
      await b.close();
    });

    test('two processes, many keys, one account: exactly the account burst passes; refusals spend nothing', async () => {
      const ds = await Promise.all(
        Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).takeAll([{ key: `k${i % 6}`, perMinute: 5 }, { key: 'acc', perMinute: 5 }])),
      );
      assert.equal(ds.filter((d) => d.allowed).length, 5);
      const refused = ds.find((d) => !d.allowed)!;
      assert.equal(refused.refused, 1);
      assert.ok(refused.retryAfterSeconds >= 1);
      const fresh = await a.takeAll([{ key: 'k-new', perMinute: 5 }, { key: 'other-acc', perMinute: 5 }]);
      assert.equal(fresh.allowed, true);
      assert.equal(fresh.remaining, 4);
    });

    test("the minute's hash is a hash table from its first call, not a listpack Redis scans field by field", async () => {
      const redis = new Redis(redisUrl);
      try {
        const p = `${prefix}enc:`;
        const l = new RedisRateLimiter(redisUrl, { prefix: p });
        assert.ok((await l.takeAll([{ key: 'one-account', perMinute: 5 }])).allowed);
        await l.close();
        const [hash, ...more] = await redis.keys(`${p}*`);
        assert.equal(more.length, 0);
        assert.equal(await redis.object('ENCODING', hash!), 'hashtable');
      } finally {
        redis.disconnect();
      }
    });

    test('the key bucket refuses first when it is the emptier one', async () => {
      for (let i = 0; i < 2; i++) assert.ok((await a.takeAll([{ key: 'small', perMinute: 2 }, { key: 'big', perMinute: 100 }])).allowed);
      const d = await b.takeAll([{ key: 'small', perMinute: 2 }, { key: 'big', perMinute: 100 }]);
      assert.equal(d.allowed, false);
      assert.equal(d.refused, 0);
    });
  });
}

const setups: Array<[string, Record<string, string>]> = [['in-process limiter', {}]];
if (redisUrl) setups.push(['Redis limiter', { REDIS_URL: redisUrl }]);

for (const [name, env] of setups) {
  describe(`a 5/min account on the ${name}`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness('sqlite', env);
    });
    after(() => h.close());

    test('gets no more calls by creating new keys: 429 with scope account', async () => {
      const acc = await h.account({ rateLimitPerMinute: 5 });
      const hello = (key: string) => h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': key } });
      // Creating a key is itself a call of the account: 1 of 5.
      const created = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': acc.apiKey }, payload: { name: 'second' } });
      assert.equal(created.statusCode, 201);
      const second = json<{ data: { key: string } }>(created).data.key;
      const codes: number[] = [];
      for (let i = 0; i < 4; i++) codes.push((await hello(i % 2 ? acc.apiKey : second)).statusCode);
      assert.deepEqual(codes, [200, 200, 200, 200]);
      const r = await hello(second);
      assert.equal(r.statusCode, 429);
      const err = errorOf(r);
      assert.equal(err.code, 'rate_limited');
      assert.equal(err.details?.scope, 'account');
      assert.match(err.message, /account/);
      assert.ok(Number(r.headers['retry-after']) >= 1);
      assert.equal(r.headers['ratelimit-remaining'], '0');
    });

    test("an account's only key reaches it: 429 with scope key; with a second key revoked, the same", async () => {
      const acc = await h.account({ rateLimitPerMinute: 5 });
      const headers = { 'x-api-key': acc.apiKey };
      const hello = () => h.app.inject({ url: '/echo/v1/hello', headers });
      // Two calls of the 5: a second key made and revoked; the account has one active key again.
      const created = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 'second' } });
      assert.equal(created.statusCode, 201);
      const revoked = await h.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${json<{ data: { id: string } }>(created).data.id}`, headers });
      assert.equal(revoked.statusCode, 200);
      for (let i = 0; i < 3; i++) assert.equal((await hello()).statusCode, 200);
      const r = await hello();
      assert.equal(r.statusCode, 429);
      assert.equal(errorOf(r).details?.scope, 'key');
      assert.match(errorOf(r).message, /this API key/);
    });

    test('another account is not affected', async () => {
      const other = await h.account({ rateLimitPerMinute: 5 });
      const r = await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': other.apiKey } });
      assert.equal(r.statusCode, 200);
      assert.equal(r.headers['ratelimit-remaining'], '4');
    });
  });
}
