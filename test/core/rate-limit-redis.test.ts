// The shared rate limiter on a real Redis (TEST_REDIS_URL; .ci/run sets it).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { RedisRateLimiter } from '../../src/ratelimit/redis-rate-limiter.js';
import { errorOf, startHarness, type Harness } from '../helpers/harness.js';

const url = process.env.TEST_REDIS_URL;

if (url) {
  describe('Redis rate limiter', () => {
    const prefix = `sdg-test:${randomBytes(4).toString('hex')}:`;
    let a: RedisRateLimiter;
    let b: RedisRateLimiter;
    before(() => {
      a = new RedisRateLimiter(url, prefix);
      b = new RedisRateLimiter(url, prefix);
    });
    after(async () => {
      await a.close();
      await b.close();
    });

    test('two processes share one bucket per key: exactly the burst is allowed', async () => {
      const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).take('key_1', 10)));
      assert.equal(decisions.filter((d) => d.allowed).length, 10);
      const refused = decisions.find((d) => !d.allowed)!;
      assert.equal(refused.limit, 10);
      assert.equal(refused.remaining, 0);
      assert.ok(refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 6, String(refused.retryAfterSeconds));
      assert.equal((await a.take('key_2', 10)).allowed, true, 'keys are separate');
    });

    test('the bucket refills with time', async () => {
      // 60 a minute = one token a second: emptying the bucket takes far less than that, even on a
      // loaded machine (at 600 a minute a slow run refilled a token before the check).
      for (let i = 0; i < 60; i++) await a.take('key_3', 60);
      assert.equal((await b.take('key_3', 60)).allowed, false);
      await new Promise((r) => setTimeout(r, 1_100));
      assert.equal((await b.take('key_3', 60)).allowed, true);
    });
  });

  describe('the gateway with REDIS_URL', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness('sqlite', { REDIS_URL: url });
    });
    after(() => h.close());

    test('answers 429 from the shared bucket', async () => {
      assert.ok(h.deps.rateLimiter instanceof RedisRateLimiter);
      const acc = await h.account({ rateLimitPerMinute: 3 });
      const codes = [];
      for (let i = 0; i < 4; i++) codes.push((await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': acc.apiKey } })).statusCode);
      assert.deepEqual(codes, [200, 200, 200, 429]);
      const r = await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': acc.apiKey } });
      assert.equal(errorOf(r).code, 'rate_limited');
      assert.ok(Number(r.headers['retry-after']) >= 1);
    });
  });
}
