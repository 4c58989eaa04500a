// Per-account quotas on unfinished jobs: open watchlist batches and queued exports beyond the limit
// answer 409 open_jobs_limit_reached (stable code, clear message), are not charged and create
// nothing; another account is unaffected; once a job finishes there is room again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { drainBulkWork } from '../../src/wiring/drain-jobs.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json } from '../helpers/harness.js';
import { BASE, bulkHarness, call, type BulkHarness } from './helpers.js';

const RANGE = { startDate: '2025-06-01T00:00:00Z', endDate: '2025-06-02T00:00:00Z' };

for (const backend of backends()) {
  describe(`open-job quotas (${backend})`, () => {
    let b: BulkHarness;
    before(async () => {
      b = await bulkHarness(backend, { MAX_OPEN_BATCHES_PER_ACCOUNT: '3', MAX_OPEN_EXPORTS_PER_ACCOUNT: '2' });
    });
    after(() => b.h.close());

    test('a fourth open batch is 409, not charged; other accounts and finished batches do not count', async () => {
      const a = await b.h.account({ credits: 1_000 });
      const add = { items: [{ username: b.sample.usernames[0] }] };
      for (let i = 0; i < 2; i++) assert.equal((await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, add)).statusCode, 202);
      assert.equal((await call(b.h, a, 'POST', `${BASE}/watchlist/batch-remove`, { socialUserIds: ['1'] })).statusCode, 202);
      const r = await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, add);
      assert.equal(r.statusCode, 409);
      const err = errorOf(r);
      assert.equal(err.code, 'open_jobs_limit_reached');
      assert.match(err.message, /3 unfinished watchlist batches/);
      assert.deepEqual(err.details, { limit: 3, open: 3 });
      assert.equal(r.headers['x-credits-charged'], '0');
      const n = await b.h.deps.store.db.selectFrom('watchlist_batches').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', a.accountId).executeTakeFirstOrThrow();
      assert.equal(Number(n.n), 3);
      const bal = json<{ data: { balance: number } }>(await call(b.h, a, 'GET', '/api/v1/credits/balance'));
      assert.equal(bal.data.balance, 1_000);

      const other = await b.h.account();
      assert.equal((await call(b.h, other, 'POST', `${BASE}/watchlist/batch`, add)).statusCode, 202);

      await drainBulkWork(b.h.deps, { crawl: false });
      assert.equal((await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, add)).statusCode, 202);
    });

    test('a third queued export is 409; concurrent requests never exceed the limit', async () => {
      const a = await b.h.account();
      const codes = await Promise.all(Array.from({ length: 6 }, () => call(b.h, a, 'POST', `${BASE}/exports/generate`, RANGE).then((r) => r.statusCode)));
      assert.deepEqual(codes.sort(), [202, 202, 409, 409, 409, 409]);
      const r = await call(b.h, a, 'POST', `${BASE}/exports/generate`, RANGE);
      assert.equal(errorOf(r).code, 'open_jobs_limit_reached');
      assert.match(errorOf(r).message, /2 unfinished exports/);
      await drainBulkWork(b.h.deps, { crawl: false });
      assert.equal((await call(b.h, a, 'POST', `${BASE}/exports/generate`, RANGE)).statusCode, 202);
    });
  });
}
