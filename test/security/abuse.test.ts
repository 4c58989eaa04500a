// A flood of requests with bad keys from one address is answered 429 (scope ip) before the key
// lookup, while a good key from another address keeps working; a key found valid lately is served
// from the blocked address too (a neighbour behind the same NAT), with its lookup as usual.
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
          // The address's budget, described as a keyed 429 describes the account's.
          assert.equal(res.headers['ratelimit-limit'], '20');
          assert.equal(res.headers['ratelimit-remaining'], '0');
          assert.equal(res.headers['ratelimit-reset'], res.headers['retry-after']);
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

    test('a key found valid lately is served from the blocked address; guesses and a key revoked since are still refused', async () => {
      const natted = '127.0.0.3';
      const balance = (key: string | undefined, remoteAddress: string) =>
        h.app.inject({ method: 'GET', url: '/api/v1/credits/balance', remoteAddress, headers: key ? { 'x-api-key': key } : {} });
      // A second key of the account, used once from elsewhere (so this process found it valid), to revoke later.
      const made = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': good.apiKey, 'content-type': 'application/json' }, payload: { name: 'second' } });
      assert.equal(made.statusCode, 201);
      const second = (JSON.parse(made.body) as { data: { id: string; key: string } }).data;
      assert.equal((await balance(second.key, '127.0.0.1')).statusCode, 200);
      assert.equal((await balance(good.apiKey, '127.0.0.1')).statusCode, 200);

      // The neighbour guesses keys until its address is blocked.
      for (let i = 0; i < 25; i++) await balance(`sdg_live_${'y'.repeat(32)}${i}`, natted);
      assert.equal((await balance(`sdg_live_${'y'.repeat(32)}new`, natted)).statusCode, 429);
      assert.equal((await balance(undefined, natted)).statusCode, 429);

      // The good key from the same address is served, each call looked up as usual.
      for (let i = 0; i < 5; i++) {
        const n = lookups;
        const ok = await balance(good.apiKey, natted);
        assert.equal(ok.statusCode, 200, ok.body);
        assert.ok(lookups > n, 'the key is still looked up');
      }
      // A guess after it is refused without a lookup.
      const n = lookups;
      const guess = await balance(`sdg_live_${'y'.repeat(32)}late`, natted);
      assert.equal(guess.statusCode, 429);
      assert.equal((JSON.parse(guess.body) as { error: { details: { scope: string } } }).error.details.scope, 'ip');
      assert.equal(lookups, n);

      // The second key, revoked since: looked up once, refused (the address is still out of budget), then no more lookups.
      const del = await h.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${second.id}`, headers: { 'x-api-key': good.apiKey } });
      assert.equal(del.statusCode, 200);
      const m = lookups;
      const revoked = await balance(second.key, natted);
      assert.equal(revoked.statusCode, 429);
      assert.equal(lookups, m + 1);
      assert.equal((await balance(second.key, natted)).statusCode, 429);
      assert.equal(lookups, m + 1, 'a key found revoked no longer passes the block');
    });
  });
}
