// Every validation rule of the bulk-export group, tenancy of ids, and zero credits on every call.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getBalance } from '../../src/credits/credits-repo.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, type TestAccount } from '../helpers/harness.js';
import { BASE, bulkHarness, call, HOUR, type BulkHarness, type Res } from './helpers.js';

function expectError(res: Res, status: number, code: string, field?: string): void {
  assert.equal(res.statusCode, status, res.body);
  const e = errorOf(res);
  assert.equal(e.code, code, res.body);
  if (field !== undefined) {
    const fields = (e.details?.fields ?? []) as Array<{ field: string }>;
    assert.ok(
      fields.some((f) => f.field === field),
      `details should name ${field}: ${res.body}`,
    );
  }
}

for (const backend of backends()) {
  describe(`bulk export validation (${backend})`, () => {
    let b: BulkHarness;
    let a: TestAccount;
    const gen = (body: unknown) => call(b.h, a, 'POST', `${BASE}/exports/generate`, body);
    const add = (body: unknown) => call(b.h, a, 'POST', `${BASE}/watchlist/batch`, body);
    const remove = (body: unknown) => call(b.h, a, 'POST', `${BASE}/watchlist/batch-remove`, body);

    before(async () => {
      b = await bulkHarness(backend);
      a = await b.h.account({ credits: 500 });
    });
    after(() => b.h.close());

    test('generate: missing or mistyped fields are invalid_request naming the field', async () => {
      expectError(await gen({ startDate: '2025-06-01T00:00:00Z' }), 400, 'invalid_request', 'body.endDate');
      expectError(await gen({ startDate: 20250601, endDate: '2025-06-01T10:00:00Z' }), 400, 'invalid_request', 'body.startDate');
      expectError(await gen({ startDate: '2025-06-01T00:00:00Z', endDate: '2025-06-01T10:00:00Z', format: 'csv' }), 400, 'invalid_request', 'body.format');
      expectError(await gen([]), 400, 'invalid_request');
    });

    test('generate: dates must be ISO 8601 with an offset or Z', async () => {
      const end = '2025-06-01T10:00:00Z';
      for (const bad of ['2025-06-01T00:00:00', '2025-06-01', 'yesterday', '2025-02-30T00:00:00Z', '2025-13-01T00:00:00Z', '2025-06-01T24:00:00Z', '2025-06-01 00:00:00Z', '', ' ', '2025-06-01T00:00:00Z'.repeat(4)]) {
        const res = await gen({ startDate: bad, endDate: end });
        // Empty and overlong strings too: no date, as the contract's invalid_date_range says.
        expectError(res, 400, 'invalid_date_range', 'body.startDate');
      }
      expectError(await gen({ startDate: '2025-06-01T00:00:00Z', endDate: '' }), 400, 'invalid_date_range', 'body.endDate');
      expectError(await gen({ startDate: '2025-06-01T00:00:00Z', endDate: '2025-06-01T10:00:00' }), 400, 'invalid_date_range', 'body.endDate');
    });

    test('generate: an instant outside the years 0000 to 9999 in UTC is refused (it could not be written back as a date-time)', async () => {
      // Before: 202, and the record said startDate "-000001-12-31T23:00:00.000Z", which broke the exports list's schema.
      const early = await gen({ startDate: '0000-01-01T00:00:00+01:00', endDate: '0000-01-01T12:00:00+01:00' });
      expectError(early, 400, 'invalid_date_range', 'body.startDate');
      assert.match(errorOf(early).message, /in the years 0000 to 9999 once in UTC/);
      expectError(await gen({ startDate: '9999-12-31T12:00:00-12:00', endDate: '9999-12-31T13:00:00-12:00' }), 400, 'invalid_date_range', 'body.startDate');
      expectError(await gen({ startDate: '9999-12-31T00:00:00Z', endDate: '9999-12-31T12:00:00-12:00' }), 400, 'invalid_date_range', 'body.endDate');
      // The edges themselves are fine.
      const first = await gen({ startDate: '0000-01-01T00:00:00Z', endDate: '0000-01-01T01:00:00Z' });
      assert.equal(first.statusCode, 202, first.body);
      assert.equal(json<{ data: { startDate: string } }>(first).data.startDate, '0000-01-01T00:00:00.000Z');
      const list = await call(b.h, a, 'GET', `${BASE}/exports`);
      assert.equal(list.statusCode, 200, list.body);
    });

    test('generate: start before end, span at most 24 h (exactly 24 h allowed, 24 h + 1 ms refused)', async () => {
      expectError(await gen({ startDate: '2025-06-01T10:00:00Z', endDate: '2025-06-01T10:00:00Z' }), 400, 'invalid_date_range', 'body.endDate');
      expectError(await gen({ startDate: '2025-06-01T10:00:00Z', endDate: '2025-06-01T09:00:00Z' }), 400, 'invalid_date_range', 'body.endDate');
      expectError(await gen({ startDate: '2025-06-01T00:00:00.000Z', endDate: '2025-06-02T00:00:00.001Z' }), 400, 'invalid_date_range', 'body.endDate');
      // Finer than a millisecond: rounded up (bounds of [start, end) over times stored to the
      // millisecond), not cut: 0.4 µs past 24 h is past it, and a range holding an instant is one.
      expectError(await gen({ startDate: '2025-06-01T00:00:00Z', endDate: '2025-06-02T00:00:00.0004Z' }), 400, 'invalid_date_range', 'body.endDate');
      const fine = await gen({ startDate: '2025-06-03T00:00:00.0001Z', endDate: '2025-06-03T00:00:00.0019Z' });
      assert.equal(fine.statusCode, 202, fine.body);
      assert.deepEqual(
        [json<{ data: { startDate: string } }>(fine).data.startDate, json<{ data: { endDate: string } }>(fine).data.endDate],
        ['2025-06-03T00:00:00.001Z', '2025-06-03T00:00:00.002Z'],
      );
      // Offsets count: 00:00+02:00 is 22:00Z the day before.
      expectError(await gen({ startDate: '2025-06-01T00:00:00+02:00', endDate: '2025-06-02T00:00:00Z' }), 400, 'invalid_date_range');
      const ok = await gen({ startDate: '2025-06-01T00:00:00Z', endDate: '2025-06-02T00:00:00Z' });
      assert.equal(ok.statusCode, 202, ok.body);
      const withOffsets = await gen({ startDate: '2025-06-01T00:00:00+02:00', endDate: '2025-06-01T21:00:00-01:00' });
      assert.equal(withOffsets.statusCode, 202, withOffsets.body);
      const rec = json<{ data: Record<string, unknown> }>(withOffsets).data;
      assert.equal(rec.startDate, '2025-05-31T22:00:00.000Z');
      assert.equal(rec.endDate, '2025-06-01T22:00:00.000Z');
      assert.equal(rec.status, 'queued');
      assert.equal(rec.format, 'jsonl.gz');
      assert.match(String(rec.id), /^[0-9]+$/);
      for (const k of ['tweetCount', 'sizeBytes', 'sha256', 'startedAt', 'completedAt', 'error']) assert.equal(rec[k], null, k);
    });

    test('a 400 names each offending field of a body, each once, at most 20', async () => {
      const two = await add({ items: [{ socialUserId: 'x' }, { username: '@@' }], foo: 1 });
      assert.equal(two.statusCode, 400);
      const fields = (errorOf(two).details as { fields: Array<{ field: string }> }).fields.map((f) => f.field);
      assert.deepEqual([...fields].sort(), ['body.foo', 'body.items.0.socialUserId', 'body.items.1.username']);
      const many = await add({ items: Array.from({ length: 500 }, () => ({ socialUserId: 'x' })) });
      assert.equal(many.statusCode, 400);
      const named = (errorOf(many).details as { fields: Array<{ field: string }> }).fields.map((f) => f.field);
      assert.equal(named.length, 20);
      assert.equal(new Set(named).size, 20, 'each field once');
      // Past FULL_CHECK_VALUES values a body is named by its first error: finding them all cost half
      // a second of the event loop on a 1 MB body of 340,000 wrong items (one 400, any tenant).
      const huge = await add({ items: Array.from({ length: 5_000 }, () => []) });
      assert.equal(huge.statusCode, 400);
      const first = (errorOf(huge).details as { fields: Array<{ field: string }> }).fields.map((f) => f.field);
      assert.equal(first.length, 1, huge.body);
      assert.equal(errorOf(huge).message, `${first[0]} ${(errorOf(huge).details as { fields: Array<{ message: string }> }).fields[0]!.message}.`);
    });

    test('batch add: 1 to 100 items, each with a numeric socialUserId and/or a well-formed username', async () => {
      const many = (n: number) => ({ items: Array.from({ length: n }, (_, i) => ({ socialUserId: String(1000 + i) })) });
      expectError(await add(many(101)), 400, 'invalid_request', 'body.items');
      expectError(await add(many(0)), 400, 'invalid_request', 'body.items');
      expectError(await add({}), 400, 'invalid_request', 'body.items');
      expectError(await add({ items: 'alice' }), 400, 'invalid_request', 'body.items');
      expectError(await add({ items: { username: 'alice' } }), 400, 'invalid_request', 'body.items');
      expectError(await add({ items: [{ username: 'alice' }, {}] }), 400, 'invalid_request', 'body.items.1');
      expectError(await add({ items: [{ socialUserId: 12345 }] }), 400, 'invalid_request', 'body.items.0.socialUserId');
      expectError(await add({ items: [{ socialUserId: '12a45' }] }), 400, 'invalid_request', 'body.items.0.socialUserId');
      expectError(await add({ items: [{ socialUserId: '' }] }), 400, 'invalid_request', 'body.items.0.socialUserId');
      expectError(await add({ items: [{ username: '@alice' }] }), 400, 'invalid_request', 'body.items.0.username');
      expectError(await add({ items: [{ username: 'al ice' }] }), 400, 'invalid_request', 'body.items.0.username');
      expectError(await add({ items: [{ username: '' }] }), 400, 'invalid_request', 'body.items.0.username');
      expectError(await add({ items: [{ username: 'alice', note: 'x' }] }), 400, 'invalid_request', 'body.items.0.note');
      expectError(await add({ items: [{ username: 'alice' }], extra: 1 }), 400, 'invalid_request', 'body.extra');
      const ok = await add(many(100));
      assert.equal(ok.statusCode, 202, ok.body);
      const rec = json<{ data: { total: number; items: unknown[]; status: string; operation: string; processed: number; completedAt: null } }>(ok).data;
      assert.equal(rec.total, 100);
      assert.equal(rec.items.length, 100);
      assert.equal(rec.status, 'queued');
      assert.equal(rec.operation, 'add');
      assert.equal(rec.processed, 0);
      assert.equal(rec.completedAt, null);
    });

    test('batch remove: 1 to 100 numeric-string ids', async () => {
      expectError(await remove({ socialUserIds: Array.from({ length: 101 }, (_, i) => String(i + 1)) }), 400, 'invalid_request', 'body.socialUserIds');
      expectError(await remove({ socialUserIds: [] }), 400, 'invalid_request', 'body.socialUserIds');
      expectError(await remove({}), 400, 'invalid_request', 'body.socialUserIds');
      expectError(await remove({ socialUserIds: '123' }), 400, 'invalid_request', 'body.socialUserIds');
      expectError(await remove({ socialUserIds: [123] }), 400, 'invalid_request', 'body.socialUserIds.0');
      expectError(await remove({ socialUserIds: ['1', 'abc'] }), 400, 'invalid_request', 'body.socialUserIds.1');
      const ok = await remove({ socialUserIds: ['1', '2'] });
      assert.equal(ok.statusCode, 202, ok.body);
      assert.equal(json<{ data: { operation: string } }>(ok).data.operation, 'remove');
    });

    test('unknown ids and another account’s ids are 404 not_found alike', async () => {
      const other = await b.h.account();
      const batch = json<{ data: { batchId: string } }>(await add({ items: [{ username: 'alice' }] })).data.batchId;
      const exp = json<{ data: { id: string } }>(await gen({ startDate: '2025-06-01T00:00:00Z', endDate: '2025-06-01T01:00:00Z' })).data.id;

      expectError(await call(b.h, other, 'GET', `${BASE}/watchlist/batch/${batch}`), 404, 'not_found');
      expectError(await call(b.h, a, 'GET', `${BASE}/watchlist/batch/wlb_nope`), 404, 'not_found');
      expectError(await call(b.h, other, 'GET', `${BASE}/exports/${exp}/download`), 404, 'not_found');
      expectError(await call(b.h, a, 'GET', `${BASE}/exports/123456789/download`), 404, 'not_found');
      expectError(await call(b.h, a, 'GET', `${BASE}/exports/abc/download`), 400, 'invalid_request', 'params.id');
      // Owner, not yet completed: 409.
      expectError(await call(b.h, a, 'GET', `${BASE}/exports/${exp}/download`), 409, 'export_not_ready');
      expectError(await call(b.h, other, 'GET', `${BASE}/exports/latest`), 404, 'not_found');
      const otherList = json<{ items: unknown[] }>(await call(b.h, other, 'GET', `${BASE}/exports`));
      assert.deepEqual(otherList.items, []);
    });

    test('list pagination: limit 1..100, cursors bound to the list and the account', async () => {
      expectError(await call(b.h, a, 'GET', `${BASE}/exports?limit=0`), 400, 'invalid_request');
      expectError(await call(b.h, a, 'GET', `${BASE}/exports?limit=101`), 400, 'invalid_request');
      expectError(await call(b.h, a, 'GET', `${BASE}/watchlist?limit=abc`), 400, 'invalid_request');
      for (let i = 0; i < 3; i++) await gen({ startDate: new Date(Date.UTC(2025, 4, 1 + i)).toISOString(), endDate: new Date(Date.UTC(2025, 4, 1 + i) + HOUR).toISOString() });
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await call(b.h, a, 'GET', `${BASE}/exports?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.equal(res.statusCode, 200, res.body);
        const page = json<{ items: Array<{ id: string; createdAt: string }>; hasNextPage: boolean; nextCursor: string | null }>(res);
        assert.equal(page.nextCursor === null, !page.hasNextPage);
        seen.push(...page.items.map((i) => i.id));
        cursor = page.nextCursor;
        pages++;
      } while (cursor && pages < 20);
      assert.equal(new Set(seen).size, seen.length, 'no repeats');
      const all = await b.h.deps.store.db.selectFrom('exports').select(['id', 'created_at']).where('account_id', '=', a.accountId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
      assert.deepEqual(seen, all.map((r) => r.id), 'every export once, newest first');
      const first = json<{ nextCursor: string }>(await call(b.h, a, 'GET', `${BASE}/exports?limit=1`)).nextCursor;
      const other = await b.h.account();
      expectError(await call(b.h, other, 'GET', `${BASE}/exports?cursor=${encodeURIComponent(first)}`), 400, 'invalid_cursor');
      expectError(await call(b.h, a, 'GET', `${BASE}/watchlist?cursor=${encodeURIComponent(first)}`), 400, 'invalid_cursor');
      expectError(await call(b.h, a, 'GET', `${BASE}/exports?cursor=${encodeURIComponent(first.slice(0, -2))}xx`), 400, 'invalid_cursor');
    });

    test('every bulk-export endpoint costs 0 credits', async () => {
      const c = await b.h.account({ credits: 7 });
      const batch = json<{ data: { batchId: string } }>(await call(b.h, c, 'POST', `${BASE}/watchlist/batch`, { items: [{ username: 'alice' }] }));
      const calls: Array<[string, 'GET' | 'POST', string, unknown?]> = [
        ['generateExport', 'POST', `${BASE}/exports/generate`, { startDate: '2025-06-01T00:00:00Z', endDate: '2025-06-01T01:00:00Z' }],
        ['addWatchlistBatch', 'POST', `${BASE}/watchlist/batch`, { items: [{ socialUserId: '42' }] }],
        ['removeWatchlistBatch', 'POST', `${BASE}/watchlist/batch-remove`, { socialUserIds: ['42'] }],
        ['getWatchlistBatch', 'GET', `${BASE}/watchlist/batch/${batch.data.batchId}`],
        ['getCrawlStatus', 'GET', `${BASE}/crawl-status`],
        ['listExports', 'GET', `${BASE}/exports`],
        ['listWatchlist', 'GET', `${BASE}/watchlist`],
      ];
      for (const [op, method, url, body] of calls) {
        const res = await call(b.h, c, method, url, body);
        assert.ok(res.statusCode === 200 || res.statusCode === 202, `${op}: ${res.body}`);
        assert.equal(res.headers['x-credits-charged'], '0', op);
        assert.equal(res.headers['x-credits-remaining'], '7', op);
      }
      assert.equal((await getBalance(b.h.deps.store.db, c.accountId))!.balance, 7);
      const ledger = await b.h.deps.store.db.selectFrom('ledger_entries').select('kind').where('account_id', '=', c.accountId).execute();
      assert.deepEqual(ledger.map((l) => l.kind), ['grant']);
    });
  });
}
