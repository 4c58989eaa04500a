// A flood of requests with bad keys from one address is answered 429 (scope ip) before the key
// lookup, while a good key from another address keeps working; the budget refills with time.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../helpers/backends.js';
import { errorOf, startHarness, type Harness, type TestAccount } from '../helpers/harness.js';

for (const backend of backends()) {
  describe(`abuse: bad keys from one address (${backend})`, () => {
    let h: Harness;
    let good: TestAccount;
    let lookups = 0;
    before(async () => {
      h = await startHarness(backend, { AUTH_FAILURES_PER_MINUTE: '20' }, (deps) => {
        // A lookup is either answered at once (known) or waited for (resolve).
        const known = deps.keys.known.bind(deps.keys);
        const resolve = deps.keys.resolve.bind(deps.keys);
        deps.keys.known = (key: string) => {
          const k = known(key);
          if (k) lookups += 1;
          return k;
        };
        deps.keys.resolve = (key: string) => {
          lookups += 1;
          return resolve(key);
        };
      });
      good = await h.account();
    });
    after(() => h.close());

    test('the flood turns to 429 before any lookup; another address with a good key is served', async () => {
      const attacker = '127.0.0.2';
      const codes: number[] = [];
      for (let i = 0; i < 200; i++) {
        const res = await h.app.inject({
          method: 'GET',
          url: '/api/v1/credits/balance',
          remoteAddress: attacker,
          headers: i % 2 ? { 'x-api-key': `sdg_live_${'x'.repeat(32)}${i}` } : {},
        });
        codes.push(res.statusCode);
        if (res.statusCode === 429) {
          const err = errorOf(res);
          assert.equal(err.code, 'rate_limited');
          assert.equal((err.details as { scope: string }).scope, 'ip');
          assert.ok(Number(res.headers['retry-after']) >= 1);
        }
      }
      assert.equal(codes.filter((c) => c === 401).length, 20, 'the budget of failures is answered 401');
      assert.equal(codes.filter((c) => c === 429).length, 180);
      assert.ok(codes.slice(20).every((c) => c === 429));
      // Only the requests that carried a key within the budget were looked up (half of the first 20,
      // the 21st tripped the limit after its lookup); none of the 429s after it.
      assert.ok(lookups > 0 && lookups <= 11, `lookups: ${lookups}`);

      const before = lookups;
      // Even a valid key from the blocked address waits, with no lookup.
      const blocked = await h.app.inject({ method: 'GET', url: '/api/v1/credits/balance', remoteAddress: attacker, headers: { 'x-api-key': good.apiKey } });
      assert.equal(blocked.statusCode, 429);
      assert.equal(lookups, before);

      for (let i = 0; i < 20; i++) {
        const ok = await h.app.inject({ method: 'GET', url: '/api/v1/credits/balance', remoteAddress: '127.0.0.1', headers: { 'x-api-key': good.apiKey } });
        assert.equal(ok.statusCode, 200);
      }
    });
  });
}
