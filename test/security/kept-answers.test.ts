// Item 1 of the hardening round: an Idempotency-Key on key creation never keeps the new key's secret,
// so neither the idempotency table nor a replay (by any key of the account) can reveal it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends } from '../helpers/backends.js';
import { json, startHarness, type Harness } from '../helpers/harness.js';

interface Created {
  data: { id: string; prefix: string; key: string | null; name: string | null };
}

for (const backend of backends()) {
  describe(`kept answers hold no secret (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    test('a key created with an Idempotency-Key: the secret is answered once, never stored nor replayed', async () => {
      const a = await h.account();
      const first = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': a.apiKey, 'idempotency-key': 'mk-1' }, payload: { name: 'ci' } });
      assert.equal(first.statusCode, 201);
      const made = json<Created>(first).data;
      assert.ok(made.key && made.key.length > 20);

      const rows = await h.deps.store.db.selectFrom('idempotency_keys').select(['response_body']).where('account_id', '=', a.accountId).execute();
      assert.equal(rows.length, 1);
      assert.ok(!rows[0]!.response_body!.includes(made.key), 'the kept answer holds the secret');

      // Another key of the same account replays it: the id and prefix, not the secret.
      const other = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': a.apiKey }, payload: {} });
      const otherKey = json<Created>(other).data.key!;
      const replay = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': otherKey, 'idempotency-key': 'mk-1' }, payload: { name: 'ci' } });
      assert.equal(replay.statusCode, 201);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.ok(!replay.body.includes(made.key));
      const replayed = json<Created>(replay).data;
      assert.equal(replayed.key, null);
      assert.equal(replayed.id, made.id);
      assert.equal(replayed.prefix, made.prefix);
      // The created key itself works.
      const hello = await h.app.inject({ method: 'GET', url: '/api/v1/credits/balance', headers: { 'x-api-key': made.key } });
      assert.equal(hello.statusCode, 200);
    });
  });
}
