import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ledgerSum } from '../../src/credits/credits-repo.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, startHarness, type Harness, type TestAccount } from '../helpers/harness.js';

for (const backend of backends()) {
  describe(`account routes (${backend})`, () => {
    let h: Harness;
    let a: TestAccount;
    before(async () => {
      h = await startHarness(backend);
      a = await h.account({ credits: 5_000 });
    });
    after(() => h.close());

    test('balance shows the granted credits and charges nothing', async () => {
      const res = await h.app.inject({ url: '/api/v1/credits/balance', headers: { 'x-api-key': a.apiKey } });
      assert.equal(res.statusCode, 200);
      const body = json<{ data: { accountId: string; balance: number; updatedAt: string }; meta: { requestId: string; cached: boolean } }>(res);
      assert.equal(body.data.accountId, a.accountId);
      assert.equal(body.data.balance, 5_000);
      assert.equal(body.meta.requestId, res.headers['x-request-id']);
      assert.equal(res.headers['x-credits-charged'], '0');
      assert.equal(res.headers['x-credits-remaining'], '5000');
      assert.ok(Number(res.headers['ratelimit-limit']) > 0);
    });

    test('a new key is shown once, works, is listed without the secret and can be revoked', async () => {
      const created = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': a.apiKey }, payload: { name: 'ci' } });
      assert.equal(created.statusCode, 201);
      const k = json<{ data: { id: string; key: string; prefix: string; name: string } }>(created).data;
      assert.match(k.key, /^sdg_live_/);
      assert.ok(k.key.startsWith(k.prefix));
      assert.equal(k.name, 'ci');
      // No cache between the caller and us keeps a secret, or any account's answer, an error's too.
      assert.equal(created.headers['cache-control'], 'no-store');

      const hello = await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': k.key } });
      assert.equal(hello.statusCode, 200);
      assert.equal(hello.headers['cache-control'], 'no-store');
      const missing = await h.app.inject({ method: 'DELETE', url: '/api/v1/api-keys/key_nope', headers: { 'x-api-key': k.key } });
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.headers['cache-control'], 'no-store');
      assert.equal(json<{ data: { accountId: string } }>(hello).data.accountId, a.accountId);

      const list = await h.app.inject({ url: '/api/v1/api-keys', headers: { 'x-api-key': a.apiKey } });
      assert.equal(list.statusCode, 200);
      assert.ok(!list.body.includes(k.key), 'the list never shows a secret');
      const keys = json<{ items: Array<{ id: string; revokedAt: string | null }> }>(list).items;
      assert.ok(keys.some((x) => x.id === k.id && x.revokedAt === null));

      const stored = await h.deps.store.db.selectFrom('api_keys').select('key_hash').where('id', '=', k.id).executeTakeFirstOrThrow();
      assert.notEqual(stored.key_hash, k.key);
      assert.match(stored.key_hash, /^[0-9a-f]{64}$/);

      const del = await h.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${k.id}`, headers: { 'x-api-key': a.apiKey } });
      assert.equal(del.statusCode, 200);
      assert.ok(json<{ data: { revokedAt: string | null } }>(del).data.revokedAt);
      const after = await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': k.key } });
      assert.equal(after.statusCode, 401);
      assert.equal(errorOf(after).code, 'invalid_api_key');
    });

    test("another account's key id answers 404 and stays valid", async () => {
      const b = await h.account();
      const res = await h.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${b.keyId}`, headers: { 'x-api-key': a.apiKey } });
      assert.equal(res.statusCode, 404);
      assert.equal(errorOf(res).code, 'not_found');
      const still = await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': b.apiKey } });
      assert.equal(still.statusCode, 200);
    });

    test('?status=active or revoked lists those keys only, page by page; a cursor of another status is refused', async () => {
      const b = await h.account({ credits: 0 });
      const headers = { 'x-api-key': b.apiKey };
      const made: string[] = [];
      for (const name of ['one', 'two', 'three']) made.push(json<{ data: { id: string } }>(await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name } })).data.id);
      assert.equal((await h.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${made[1]}`, headers })).statusCode, 200);
      type Page = { items: Array<{ id: string; revokedAt: string | null }>; nextCursor: string | null };
      const walk = async (query: string): Promise<string[]> => {
        const ids: string[] = [];
        let cursor: string | null = null;
        do {
          const res: { statusCode: number; body: string } = await h.app.inject({ url: `/api/v1/api-keys?limit=1${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, headers });
          assert.equal(res.statusCode, 200, res.body);
          const page = json<Page>(res);
          ids.push(...page.items.map((k) => k.id));
          cursor = page.nextCursor;
        } while (cursor);
        return ids;
      };
      // Newest first; the account's first key (the harness's) is active too.
      assert.deepEqual(await walk('&status=active'), [made[2], made[0], b.keyId]);
      assert.deepEqual(await walk('&status=revoked'), [made[1]]);
      assert.deepEqual(await walk(''), [made[2], made[1], made[0], b.keyId]);
      const first = json<Page>(await h.app.inject({ url: '/api/v1/api-keys?limit=1&status=active', headers }));
      const other = await h.app.inject({ url: `/api/v1/api-keys?limit=1&status=revoked&cursor=${encodeURIComponent(first.nextCursor!)}`, headers });
      assert.equal(other.statusCode, 400);
      assert.equal(errorOf(other).code, 'invalid_cursor');
      // Named as every other 400 names its field.
      assert.deepEqual((errorOf(other).details as { fields: Array<{ field: string }> }).fields.map((f) => f.field), ['querystring.cursor']);
      const bad = await h.app.inject({ url: '/api/v1/api-keys?status=expired', headers });
      assert.equal(bad.statusCode, 400);
      assert.equal(errorOf(bad).code, 'invalid_request');
      assert.deepEqual((errorOf(bad).details as { fields: Array<{ field: string }> }).fields.map((f) => f.field), ['querystring.status']);
    });

    test('api-keys body validation: wrong type, unknown field, malformed JSON, wrong content type, too large', async () => {
      const headers = { 'x-api-key': a.apiKey };
      const wrongType = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: 5 } });
      assert.equal(wrongType.statusCode, 400);
      const e1 = errorOf(wrongType);
      assert.equal(e1.code, 'invalid_request');
      assert.match(JSON.stringify(e1.details), /body\.name/);

      const extra = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { nmae: 'x' } });
      assert.equal(extra.statusCode, 400);
      assert.match(JSON.stringify(errorOf(extra).details), /nmae/);

      const bad = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { ...headers, 'content-type': 'application/json' }, payload: '{"name": ' });
      assert.equal(bad.statusCode, 400);
      assert.equal(errorOf(bad).code, 'invalid_request');

      const text = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { ...headers, 'content-type': 'text/plain' }, payload: 'name=x' });
      assert.equal(text.statusCode, 415);
      assert.equal(errorOf(text).code, 'unsupported_media_type');

      // JSON is UTF-8: a body said to be in another charset would be read as other characters.
      for (const type of ['application/json; charset=utf-16', 'application/json;charset="latin1"', 'application/json; charset=ISO-8859-1']) {
        const other = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { ...headers, 'content-type': type }, payload: '{"name":"x"}' });
        assert.equal(other.statusCode, 415, type);
        assert.equal(errorOf(other).code, 'unsupported_media_type');
      }
      for (const type of ['application/json; charset=UTF-8', 'application/json; charset="utf-8"', 'application/json;charset=utf8']) {
        const ok = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { ...headers, 'content-type': type }, payload: '{"name":"u"}' });
        assert.equal(ok.statusCode, 201, `${type}: ${ok.body}`);
        await h.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${json<{ data: { id: string } }>(ok).data.id}`, headers });
      }

      const big = await h.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }),
      });
      assert.equal(big.statusCode, 413);
      assert.equal(errorOf(big).code, 'payload_too_large');
    });

    test('a POST to api-keys with no body at all (curl -X POST) makes an unnamed key; an empty JSON body is still refused', async () => {
      const headers = { 'x-api-key': a.apiKey };
      const none = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers });
      assert.equal(none.statusCode, 201, none.body);
      const made = json<{ data: { id: string; name: string | null; key: string } }>(none).data;
      assert.equal(made.name, null);
      assert.match(made.key, /^sdg_live_/);
      // Content-Type JSON with nothing after it is malformed JSON, as before.
      const empty = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { ...headers, 'content-type': 'application/json' }, payload: '' });
      assert.equal(empty.statusCode, 400);
      assert.equal(empty.headers['x-credits-charged'], '0');
      assert.equal((await h.app.inject({ method: 'DELETE', url: `/api/v1/api-keys/${made.id}`, headers })).statusCode, 200);
    });

    test('a key name that is blank (or only invisible characters) or holds control or text-direction characters is refused, and nothing is made', async () => {
      const headers = { 'x-api-key': a.apiKey };
      const before = await h.app.inject({ url: '/api/v1/api-keys', headers });
      const count = json<{ items: unknown[] }>(before).items.length;
      // U+202E reverses how the rest reads; U+200B alone shows nothing.
      for (const name of ['   ', 'ci\u001b[2J', 'line\nbreak', 'tab\there', 'c1\u0085', 'nul\u0000', '\u202Eevil', 'x\u2066y', '\u200B', '\u200B \uFEFF', '\u3164', '\u2800', '\u115F\u1160', '\u180E', '\uFFA0', '\u034F\uFE0F']) {
        const res = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name } });
        assert.equal(res.statusCode, 400, JSON.stringify(name));
        const e = errorOf(res);
        assert.equal(e.code, 'invalid_request');
        assert.match(JSON.stringify(e.details), /body\.name/);
        // A NUL is refused earlier, for every text field, with its own words.
        assert.match(e.message, name.includes('\u0000') ? /NUL/ : /must not be blank or hold control or text-direction characters/);
      }
      const after = await h.app.inject({ url: '/api/v1/api-keys', headers });
      assert.equal(json<{ items: unknown[] }>(after).items.length, count);
      // Spaces inside, accents and emoji (one joined by U+200D too) are a name like any other.
      const ok = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: { name: ' naïve build 🚀 👨\u200D👩\u200D👧 ' } });
      assert.equal(ok.statusCode, 201);
      assert.equal(json<{ data: { name: string } }>(ok).data.name, ' naïve build 🚀 👨\u200D👩\u200D👧 ');
    });

    test('plans list the configured plans', async () => {
      const res = await h.app.inject({ url: '/api/v1/payments/plans', headers: { 'x-api-key': a.apiKey } });
      assert.equal(res.statusCode, 200);
      const plans = json<{ data: { plans: Array<{ id: string; rateLimitPerMinute: number }> } }>(res).data.plans;
      assert.deepEqual(plans.map((p) => p.id), h.config.plans.map((p) => p.id));
      assert.ok(plans.find((p) => p.id === 'free')!.rateLimitPerMinute >= 600);
    });

    test('usage pages the ledger newest first; cursors are bound to the account', async () => {
      const u = await h.account({ credits: 0 });
      for (let i = 1; i <= 5; i++) await (await import('../../src/credits/credits-repo.js')).grant(h.deps.store.db, u.accountId, i, `g${i}`);
      const seen: number[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
        const res = await h.app.inject({ url: `/api/v1/usage${q}`, headers: { 'x-api-key': u.apiKey } });
        assert.equal(res.statusCode, 200);
        const body = json<{ items: Array<{ amount: number; balanceAfter: number }>; hasNextPage: boolean; nextCursor: string | null }>(res);
        assert.equal(body.nextCursor === null, !body.hasNextPage);
        seen.push(...body.items.map((i) => i.amount));
        cursor = body.nextCursor;
        pages++;
        if (pages === 1 && cursor) {
          const foreign = await h.app.inject({ url: `/api/v1/usage?cursor=${encodeURIComponent(cursor)}`, headers: { 'x-api-key': a.apiKey } });
          assert.equal(foreign.statusCode, 400);
          assert.equal(errorOf(foreign).code, 'invalid_cursor');
          const forged = cursor.replace(/^./, (c) => (c === 'e' ? 'f' : 'e'));
          const res2 = await h.app.inject({ url: `/api/v1/usage?cursor=${encodeURIComponent(forged)}`, headers: { 'x-api-key': u.apiKey } });
          assert.equal(res2.statusCode, 400);
          assert.equal(errorOf(res2).code, 'invalid_cursor');
        }
      } while (cursor);
      assert.deepEqual(seen, [5, 4, 3, 2, 1]);
      assert.equal(pages, 3);
      assert.equal(await ledgerSum(h.deps.store.db, u.accountId), 15);
    });

    test('usage is ordered by time, then id within a millisecond, across pages; an id-only cursor from before goes on', async () => {
      const u = await h.account({ credits: 0 });
      const other = await h.account({ credits: 0 });
      const db = h.deps.store.db;
      // Amounts name the entries. 4 is written after 3 with an earlier time (a clock stepped back).
      const times = ['2026-01-01T00:00:00.001Z', '2026-01-01T00:00:00.002Z', '2026-01-01T00:00:00.002Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.002Z', '2026-01-01T00:00:00.003Z', '2026-01-01T00:00:00.002Z'];
      const idOf = new Map<number, number>();
      for (const [i, at] of times.entries()) {
        const row = await db
          .insertInto('ledger_entries')
          .values({ account_id: u.accountId, kind: 'grant', amount: i + 1, balance_after: 0, request_id: null, key_id: null, endpoint: null, note: null, created_at: at })
          .returning('id')
          .executeTakeFirstOrThrow();
        idOf.set(i + 1, Number(row.id));
      }
      await db.updateTable('accounts').set({ balance: 28 }).where('id', '=', u.accountId).execute(); // the ledger sums to the balance
      const expected = [6, 7, 5, 3, 2, 1, 4];
      for (const limit of [1, 2, 3, 7]) {
        const seen: number[] = [];
        let cursor: string | null = null;
        do {
          const q: string = cursor ? `?limit=${limit}&cursor=${encodeURIComponent(cursor)}` : `?limit=${limit}`;
          const res = await h.app.inject({ url: `/api/v1/usage${q}`, headers: { 'x-api-key': u.apiKey } });
          assert.equal(res.statusCode, 200);
          const body = json<{ items: Array<{ amount: number }>; nextCursor: string | null }>(res);
          seen.push(...body.items.map((i) => i.amount));
          cursor = body.nextCursor;
        } while (cursor);
        assert.deepEqual(seen, expected, `limit ${limit}`);
      }
      // A cursor as issued before this order (the last entry's opaque id only), after entry 5.
      const ids = h.deps.ledgerIds;
      const legacy = (id: number) => h.deps.cursors.encode(`usage:${u.accountId}`, { after: ids.encode(id) });
      const res = await h.app.inject({ url: `/api/v1/usage?limit=10&cursor=${encodeURIComponent(legacy(idOf.get(5)!))}`, headers: { 'x-api-key': u.apiKey } });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(json<{ items: Array<{ amount: number }> }>(res).items.map((i) => i.amount), [3, 2, 1, 4]);
      // The same kind of cursor naming another account's entry is refused, and charges nothing.
      const theirs = await db
        .insertInto('ledger_entries')
        .values({ account_id: other.accountId, kind: 'grant', amount: 1, balance_after: 1, request_id: null, key_id: null, endpoint: null, note: null, created_at: times[0]! })
        .returning('id')
        .executeTakeFirstOrThrow();
      await db.updateTable('accounts').set({ balance: 1 }).where('id', '=', other.accountId).execute();
      const foreign = await h.app.inject({ url: `/api/v1/usage?cursor=${encodeURIComponent(legacy(Number(theirs.id)))}`, headers: { 'x-api-key': u.apiKey } });
      assert.equal(foreign.statusCode, 400);
      assert.equal(errorOf(foreign).code, 'invalid_cursor');
    });

    for (const limit of ['0', '101', '1.5', 'ten', '-1']) {
      test(`usage limit=${limit} is 400 invalid_request`, async () => {
        const res = await h.app.inject({ url: `/api/v1/usage?limit=${limit}`, headers: { 'x-api-key': a.apiKey } });
        assert.equal(res.statusCode, 400);
        const e = errorOf(res);
        assert.equal(e.code, 'invalid_request');
        assert.match(JSON.stringify(e.details), /limit/);
      });
    }

    test('a query parameter given twice is named as such, not as of the wrong type', async () => {
      for (const [q, field] of [['limit=5&limit=6', 'querystring.limit'], ['cursor=a&cursor=b', 'querystring.cursor']]) {
        const res = await h.app.inject({ url: `/api/v1/usage?${q}`, headers: { 'x-api-key': a.apiKey } });
        assert.equal(res.statusCode, 400);
        const e = errorOf(res);
        assert.equal(e.code, 'invalid_request');
        assert.equal(e.message, `${field} is given more than once: give it once.`);
        assert.deepEqual(e.details, { fields: [{ field, message: 'is given more than once: give it once' }] });
      }
      // Once, but of the wrong type: as before.
      const wrong = await h.app.inject({ url: '/api/v1/usage?limit=ten', headers: { 'x-api-key': a.apiKey } });
      assert.doesNotMatch(errorOf(wrong).message, /more than once/);
    });

    test('limit=1 and limit=100 are accepted', async () => {
      for (const limit of [1, 100]) {
        const res = await h.app.inject({ url: `/api/v1/usage?limit=${limit}`, headers: { 'x-api-key': a.apiKey } });
        assert.equal(res.statusCode, 200, res.body);
      }
    });

    test('unknown routes answer 404 in the envelope, with a request id', async () => {
      const res = await h.app.inject({ url: '/social/v1/nothing-here', headers: { 'x-api-key': a.apiKey } });
      assert.equal(res.statusCode, 404);
      assert.equal(errorOf(res).code, 'not_found');
      assert.match(String(res.headers['x-request-id']), /^req_/);
    });

    test('echo says hello to the caller', async () => {
      const res = await h.app.inject({ url: '/echo/v1/hello', headers: { 'X-API-KEY': a.apiKey } });
      assert.equal(res.statusCode, 200);
      const d = json<{ data: { message: string; accountId: string; timestamp: string } }>(res).data;
      assert.equal(d.message, 'hello');
      assert.equal(d.accountId, a.accountId);
      assert.ok(Math.abs(Date.parse(d.timestamp) - Date.now()) < 60_000);
      assert.match(d.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // The answer is written as text (routes/echo/hello.ts): the whole of it, and its length.
      assert.deepEqual(json(res), { data: { message: 'hello', accountId: a.accountId, timestamp: d.timestamp }, meta: { requestId: res.headers['x-request-id'], cached: false } });
      assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body));
      assert.equal(res.headers['x-credits-charged'], '0');
    });
  });
}
