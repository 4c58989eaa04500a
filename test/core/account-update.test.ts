// `sdg accounts update`: an operator moves an account to another plan, sets or clears its own rate
// limit, renames it; `sdg keys revoke-all` cuts an account's access at once. A running server
// applies each to the account's next calls (SQLite: the next turn; Postgres: within KEY_CACHE_MS),
// and bad input changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../helpers/backends.js';
import { startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { runSdg, until } from '../helpers/processes.js';

interface AccountView {
  planId: string;
  rateLimitPerMinute: number;
  watchlistLimit?: number;
}

for (const backend of backends()) {
  describe(`sdg accounts update, keys revoke-all (${backend})`, () => {
    let h: Harness;
    let a: TestAccount;
    before(async () => {
      h = await startHarness(backend);
      const made = await runSdg(['accounts', 'create', '--name', 'Ada', '--credits', '1000', '--plan', 'free', '--json'], h.testStore.env);
      assert.equal(made.code, 0, made.stderr);
      const { accountId, apiKey } = JSON.parse(made.stdout) as { accountId: string; apiKey: string };
      a = { accountId, apiKey, keyId: '' };
    });
    after(() => h.close());
    const account = async () => {
      const r = await h.app.inject({ url: '/api/v1/account', headers: { 'x-api-key': a.apiKey } });
      assert.equal(r.statusCode, 200, r.body);
      return { view: (JSON.parse(r.body) as { data: AccountView }).data, limitHeader: Number(r.headers['ratelimit-limit']) };
    };
    const plan = (id: string) => h.config.plans.find((p) => p.id === id)!;

    test('a new plan, then an own rate limit, then the plan again: the server applies each', async () => {
      assert.equal((await account()).view.planId, 'free');
      const up = await runSdg(['accounts', 'update', a.accountId, '--plan', 'pro', '--json'], h.testStore.env);
      assert.equal(up.code, 0, up.stderr);
      assert.deepEqual(
        { ...(JSON.parse(up.stdout) as Record<string, unknown>), createdAt: undefined },
        { accountId: a.accountId, name: 'Ada', planId: 'pro', balance: 1000, rateLimitPerMinute: null, createdAt: undefined },
        'credits untouched',
      );
      await until('the plan seen by the server', 3_000, async () => (await account()).view.planId === 'pro');
      assert.equal((await account()).limitHeader, plan('pro').rateLimitPerMinute);

      const own = await runSdg(['accounts', 'update', a.accountId, '--rate-limit-per-minute', '3'], h.testStore.env);
      assert.equal(own.code, 0, own.stderr);
      assert.match(own.stdout, /plan pro, rate limit 3 a minute \(this account's own\)/);
      await until('the own limit seen by the server', 3_000, async () => (await account()).view.rateLimitPerMinute === 3);
      const codes: number[] = [];
      for (let i = 0; i < 4; i++) codes.push((await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': a.apiKey } })).statusCode);
      assert.ok(codes.includes(429), `the own limit of 3 refuses a burst: ${codes.join(' ')}`);

      const back = await runSdg(['accounts', 'update', a.accountId, '--rate-limit-per-minute', 'plan', '--name', 'Ada L.'], h.testStore.env);
      assert.equal(back.code, 0, back.stderr);
      assert.match(back.stdout, /rate limit \d+ a minute \(the plan's\), balance 1000, name Ada L\./);
      await until("the plan's limit seen again", 3_000, async () => (await account()).view.rateLimitPerMinute === plan('pro').rateLimitPerMinute);
    });

    test('revoke-all: every key of the account refused, no other account touched; a new key works again', async () => {
      const other = await h.account();
      const second = await runSdg(['keys', 'create', a.accountId, '--json'], h.testStore.env);
      const secondKey = (JSON.parse(second.stdout) as { apiKey: string }).apiKey;
      const call = (key: string) => h.app.inject({ url: '/api/v1/credits/balance', headers: { 'x-api-key': key } });
      assert.equal((await call(secondKey)).statusCode, 200);
      const r = await runSdg(['keys', 'revoke-all', a.accountId, '--json'], h.testStore.env);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { accountId: string; revoked: string[]; revokedAt: string };
      assert.equal(out.revoked.length, 2, r.stdout);
      for (const key of [a.apiKey, secondKey]) await until('the key refused', 3_000, async () => (await call(key)).statusCode === 401);
      assert.equal((await call(other.apiKey)).statusCode, 200, "another account's key still works");
      const again = await runSdg(['keys', 'revoke-all', a.accountId], h.testStore.env);
      assert.match(again.stdout, /had no active key/);
      const againJson = JSON.parse((await runSdg(['keys', 'revoke-all', a.accountId, '--json'], h.testStore.env)).stdout) as { revoked: string[]; revokedAt: string | null };
      assert.deepEqual(againJson, { accountId: a.accountId, revoked: [], revokedAt: null }, 'nothing revoked: no time of revocation');
      const fresh = await runSdg(['keys', 'create', a.accountId, '--json'], h.testStore.env);
      a.apiKey = (JSON.parse(fresh.stdout) as { apiKey: string }).apiKey;
      assert.equal((await call(a.apiKey)).statusCode, 200);
      const none = await runSdg(['keys', 'revoke-all', 'acc_nobody'], h.testStore.env);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /No account acc_nobody/);
    });

    test('bad input exits 2 and changes nothing', async () => {
      const list = async () => JSON.stringify(JSON.parse((await runSdg(['accounts', 'list', '--json'], h.testStore.env)).stdout));
      const before = await list();
      for (const [args, message] of [
        [['accounts', 'update', a.accountId], /Nothing to change/],
        [['accounts', 'update', a.accountId, '--plan', 'gold'], /No plan gold; plans: /],
        [['accounts', 'update', a.accountId, '--rate-limit-per-minute', '0'], /must be a whole number of calls a minute from 1 to 2147483647, or `plan`/],
        // The stores keep it as a 32-bit integer: Postgres refused a larger one with a stack trace.
        [['accounts', 'update', a.accountId, '--rate-limit-per-minute', '2147483648'], /from 1 to 2147483647/],
        [['accounts', 'create', '--name', 'Big', '--rate-limit-per-minute', '2147483648'], /from 1 to 2147483647; got "2147483648"/],
        [['accounts', 'update', a.accountId, '--plan', 'free', '--name', ' '], /--name must not be blank/],
        [['accounts', 'update', 'acc_nobody', '--plan', 'free'], /No account acc_nobody/],
      ] as const) {
        const r = await runSdg([...args], h.testStore.env);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, message);
      }
      assert.equal(await list(), before);
    });
  });
}
