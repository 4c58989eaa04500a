// An account holds at most its plan's number of active keys (each key carries its own rate limit).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../helpers/backends.js';
import { errorOf, json, startHarness, type Harness } from '../helpers/harness.js';

for (const backend of backends()) {
  describe(`keys per account (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    test("creation stops at the plan's keyLimit with 409 key_limit_reached, uncharged; a revocation makes room", async () => {
      const a = await h.account({ planId: 'free' });
      const limit = h.config.plans.find((p) => p.id === 'free')!.keyLimit!;
      assert.equal(limit, 5);
      const headers = { 'x-api-key': a.apiKey };
      const made: string[] = [];
      // The harness made the first key.
      for (let i = 1; i < limit; i++) {
        const res = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: {} });
        assert.equal(res.statusCode, 201);
        made.push(json<{ data: { id: string } }>(res).data.id);
      }
      const over = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: {} });
      assert.equal(over.statusCode, 409);
      assert.equal(errorOf(over).code, 'key_limit_reached');
      assert.deepEqual(errorOf(over).details, { limit: 5, active: 5 });
      assert.equal(over.headers['x-credits-charged'], '0');
      const count = await h.deps.store.db.selectFrom('api_keys').select('id').where('account_id', '=', a.accountId).execute();
      assert.equal(count.length, 5);

      const revoked = await h.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${made[0]}`, headers });
      assert.equal(revoked.statusCode, 200);
      const again = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: {} });
      assert.equal(again.statusCode, 201);
    });

    test('concurrent creations cannot pass the limit together (the count and the insert are one locked step)', async () => {
      const a = await h.account({ planId: 'free' });
      const headers = { 'x-api-key': a.apiKey };
      const answers = await Promise.all(Array.from({ length: 12 }, () => h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: {} })));
      const codes = answers.map((r) => r.statusCode).sort();
      // The harness made the first key: 4 more fit.
      assert.deepEqual(codes, [...Array<number>(4).fill(201), ...Array<number>(8).fill(409)], answers.map((r) => r.body).join('\n'));
      const active = await h.deps.store.db.selectFrom('api_keys').select('id').where('account_id', '=', a.accountId).where('revoked_at', 'is', null).execute();
      assert.equal(active.length, 5);
    });
  });
}
