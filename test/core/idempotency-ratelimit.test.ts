import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { MemoryRateLimiter } from '../../src/ratelimit/rate-limiter.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, startHarness, type Harness } from '../helpers/harness.js';

for (const backend of backends()) {
  describe(`idempotency (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend, { COSTS: JSON.stringify({ createApiKey: 3 }) });
    });
    after(() => h.close());

    test('same key and body replays the first response and charges once; a different body is 409', async () => {
      const a = await h.account({ credits: 100 });
      const headers = { 'x-api-key': a.apiKey, 'idempotency-key': 'create-1' };
      const first = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 'one' } });
      assert.equal(first.statusCode, 201);
      assert.equal(first.headers['x-credits-charged'], '3');
      const again = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 'one' } });
      assert.equal(again.statusCode, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal(again.headers['x-credits-charged'], '0');
      // The replay names the same key but never its secret (see test/security/kept-answers.test.ts),
      // and its request id is its own, in the body as in X-Request-Id.
      assert.deepEqual(json(again), { ...json(first), data: { ...json<{ data: object }>(first).data, key: null }, meta: { ...json<{ meta: object }>(first).meta, requestId: again.headers['x-request-id'] } });
      assert.notEqual(again.headers['x-request-id'], first.headers['x-request-id']);
      const keys = await h.deps.store.db.selectFrom('api_keys').select('id').where('account_id', '=', a.accountId).execute();
      assert.equal(keys.length, 2, 'the default key and exactly one created key');
      assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 97);

      const other = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 'two' } });
      assert.equal(other.statusCode, 409);
      assert.equal(errorOf(other).code, 'idempotency_conflict');
      assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 97);
    });

    test('keys are per account: another account may use the same Idempotency-Key', async () => {
      const a = await h.account();
      const b = await h.account();
      const r1 = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': a.apiKey, 'idempotency-key': 'shared' }, payload: {} });
      const r2 = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': b.apiKey, 'idempotency-key': 'shared' }, payload: {} });
      assert.equal(r1.statusCode, 201);
      assert.equal(r2.statusCode, 201);
      assert.notEqual(json<{ data: { id: string } }>(r1).data.id, json<{ data: { id: string } }>(r2).data.id);
    });

    test('a failed request does not hold the key: the corrected retry runs', async () => {
      const a = await h.account({ credits: 2 });
      const headers = { 'x-api-key': a.apiKey, 'idempotency-key': 'poor' };
      const broke = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: {} });
      assert.equal(broke.statusCode, 402);
      await (await import('../../src/credits/credits-repo.js')).grant(h.deps.store.db, a.accountId, 10, 'top up');
      const ok = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: {} });
      assert.equal(ok.statusCode, 201);
    });

    test('an answer that cannot be kept is a 500 and not charged; the key stays free for the retry', async () => {
      const a = await h.account({ credits: 100 });
      const db = h.deps.store.db;
      // A real failure of the store when the answer is written, not a stand-in for it.
      if (backend === 'sqlite') {
        await sql`create trigger sdg_keep_fails before update on idempotency_keys begin select raise(abort, 'disk full'); end`.execute(db);
      } else {
        await sql`create function sdg_keep_fails() returns trigger language plpgsql as $$ begin raise exception 'disk full'; end $$`.execute(db);
        await sql`create trigger sdg_keep_fails before update on idempotency_keys for each row execute function sdg_keep_fails()`.execute(db);
      }
      const headers = { 'x-api-key': a.apiKey, 'idempotency-key': 'keep-fails' };
      try {
        const failed = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 'k' } });
        assert.equal(failed.statusCode, 500);
        assert.equal(errorOf(failed).code, 'internal_error');
        assert.equal(failed.headers['x-credits-charged'], '0');
        assert.equal((await getBalance(db, a.accountId))!.balance, 100);
        assert.equal(await ledgerSum(db, a.accountId), 100);
      } finally {
        await sql`drop trigger sdg_keep_fails${sql.raw(backend === 'sqlite' ? '' : ' on idempotency_keys')}`.execute(db);
      }
      const retried = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 'k' } });
      assert.equal(retried.statusCode, 201);
      assert.equal(retried.headers['idempotent-replayed'], undefined);
      assert.equal(retried.headers['x-credits-charged'], '3');
      const replay = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 'k' } });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal((await getBalance(db, a.accountId))!.balance, 97);
      assert.equal(await ledgerSum(db, a.accountId), 97);
    });

    test('a charge that fails after the answer was kept drops the answer with the claim: nothing charged, the retry runs', async () => {
      const a = await h.account({ credits: 100 });
      const db = h.deps.store.db;
      const meter = h.deps.meter;
      const settle = meter.settle;
      meter.settle = () => Promise.reject(new Error('connection lost'));
      const headers = { 'x-api-key': a.apiKey, 'idempotency-key': 'charge-fails' };
      try {
        const failed = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 'k' } });
        assert.equal(failed.statusCode, 500);
        assert.equal(failed.headers['x-credits-charged'], '0');
      } finally {
        meter.settle = settle;
      }
      // The hold was released too: the whole balance can be held again.
      assert.equal((await getBalance(db, a.accountId))!.balance, 100);
      const hold = await meter.reserve(a.accountId, 100);
      assert.ok(hold.ok);
      await meter.release(hold.reservationId);
      const retried = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 'k' } });
      assert.equal(retried.statusCode, 201);
      assert.equal(retried.headers['idempotent-replayed'], undefined);
      assert.equal(retried.headers['x-credits-charged'], '3');
      assert.equal(await ledgerSum(db, a.accountId), 97);
    });

    test('concurrent requests with one key: exactly one runs', async () => {
      const a = await h.account({ credits: 1000 });
      const headers = { 'x-api-key': a.apiKey, 'idempotency-key': 'race' };
      const res = await Promise.all(Array.from({ length: 10 }, () => h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 'r' } })));
      const created = res.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
      assert.equal(created.length, 1);
      for (const r of res) assert.ok([201, 409].includes(r.statusCode), r.body);
      assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 997);
    });

    test('a claim abandoned by a dead process frees its key after 15 minutes', async () => {
      const a = await h.account({ credits: 100 });
      const old = new Date(Date.now() - 16 * 60_000).toISOString();
      await h.deps.store.db.insertInto('idempotency_keys').values({ account_id: a.accountId, key: 'orphan', request_hash: 'x', status_code: null, response_body: null, created_at: old }).execute();
      const res = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': a.apiKey, 'idempotency-key': 'orphan' }, payload: {} });
      assert.equal(res.statusCode, 201, res.body);
      await h.deps.store.db.insertInto('idempotency_keys').values({ account_id: a.accountId, key: 'busy', request_hash: 'x', status_code: null, response_body: null, created_at: new Date().toISOString() }).execute();
      const busy = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': a.apiKey, 'idempotency-key': 'busy' }, payload: {} });
      assert.equal(busy.statusCode, 409);
    });

    test('a malformed Idempotency-Key is 400', async () => {
      const a = await h.account();
      const res = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': a.apiKey, 'idempotency-key': 'x'.repeat(300) }, payload: {} });
      assert.equal(res.statusCode, 400);
      assert.equal(errorOf(res).code, 'invalid_request');
    });
  });

  describe(`rate limits (${backend})`, () => {
    let h: Harness;
    let t = 1_000_000;
    before(async () => {
      h = await startHarness(backend, {}, (deps) => {
        deps.rateLimiter = new MemoryRateLimiter(() => t);
      });
    });
    after(() => h.close());

    test('a key gets its per-minute burst, then 429 with Retry-After, and refills with time', async () => {
      const a = await h.account({ rateLimitPerMinute: 5 });
      const call = () => h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': a.apiKey } });
      for (let i = 0; i < 5; i++) {
        const r = await call();
        assert.equal(r.statusCode, 200);
        assert.equal(r.headers['ratelimit-limit'], '5');
        assert.equal(r.headers['ratelimit-remaining'], String(4 - i));
      }
      const limited = await call();
      assert.equal(limited.statusCode, 429);
      assert.equal(errorOf(limited).code, 'rate_limited');
      assert.equal(limited.headers['retry-after'], '12', '5 a minute: one token every 12 s');
      assert.equal(limited.headers['x-credits-charged'], '0');
      t += 12_000;
      assert.equal((await call()).statusCode, 200);
      assert.equal((await call()).statusCode, 429);
    });

    test('the plan sets the limit when the account has no override', async () => {
      const a = await h.account({ planId: 'free' });
      await h.deps.store.db.updateTable('accounts').set({ rate_limit_per_minute: null }).where('id', '=', a.accountId).execute();
      const r = await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': a.apiKey } });
      assert.equal(r.headers['ratelimit-limit'], String(h.config.plans.find((p) => p.id === 'free')!.rateLimitPerMinute));
    });
  });
}
