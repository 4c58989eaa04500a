// GET /social/v1/bulk-export/exports/{id}: one export's record in each status, free, and only the
// caller's own (another account's id answers exactly as an id that never existed).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { findExport, exportLease, failExport, markExportStarted } from '../../src/exports/export-repo.js';
import { drainBulkWork } from '../../src/wiring/drain-jobs.js';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { claimById } from '../../src/jobs/lease.js';
import { ExportRecord } from '../../src/routes/bulk-export/schemas.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, type TestAccount } from '../helpers/harness.js';
import { BASE, bulkHarness, call, HOUR, T0, type BulkHarness } from './helpers.js';

type Rec = ExportRecord;

for (const backend of backends()) {
  describe(`get one export (${backend})`, () => {
    let b: BulkHarness;
    let a: TestAccount;
    let other: TestAccount;
    const db = () => b.h.deps.store.db;
    const generate = async (acct: TestAccount, hoursBack: number): Promise<Rec> => {
      const res = await call(b.h, acct, 'POST', `${BASE}/exports/generate`, {
        startDate: new Date(T0 - hoursBack * HOUR).toISOString(),
        endDate: new Date(T0 - (hoursBack - 1) * HOUR).toISOString(),
      });
      assert.equal(res.statusCode, 202, res.body);
      return json<{ data: Rec }>(res).data;
    };
    const getOne = async (acct: TestAccount, id: string) => {
      const res = await call(b.h, acct, 'GET', `${BASE}/exports/${id}`);
      return { res, rec: res.statusCode === 200 ? json<{ data: Rec; meta: { requestId: string; cached: boolean } }>(res) : undefined };
    };

    before(async () => {
      b = await bulkHarness(backend);
      a = await b.h.account({ credits: 500 });
      other = await b.h.account({ credits: 500 });
      await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items: b.sample.userIds.slice(0, 2).map((socialUserId) => ({ socialUserId })) });
      await drainBulkWork(b.h.deps);
    });
    after(() => b.h.close());

    test('queued, running, failed and completed: the same record the store holds, with its counts, for 0 credits', async () => {
      const before = (await getBalance(db(), a.accountId))!.balance;

      const queued = await generate(a, 3);
      const q = await getOne(a, queued.id);
      assert.equal(q.res.statusCode, 200, q.res.body);
      assert.ok(Value.Check(ExportRecord, q.rec!.data));
      assert.deepEqual(q.rec!.data, queued, 'the record generate answered');
      assert.equal(q.rec!.data.status, 'queued');
      assert.deepEqual([q.rec!.data.tweetCount, q.rec!.data.sizeBytes, q.rec!.data.sha256, q.rec!.data.startedAt, q.rec!.data.completedAt], [null, null, null, null, null]);
      assert.equal(q.rec!.meta.requestId, q.res.headers['x-request-id']);
      assert.equal(q.res.headers['x-credits-charged'], '0');

      // A worker takes it: running, with its start time.
      const running = await generate(a, 5);
      const claim = await claimById(db(), exportLease, running.id, 'test-worker', 60_000, b.clock.ms);
      assert.ok(claim);
      await markExportStarted(db(), claim, b.clock.now().toISOString());
      const r = await getOne(a, running.id);
      assert.equal(r.rec!.data.status, 'running');
      assert.equal(r.rec!.data.startedAt, b.clock.now().toISOString());
      assert.equal(r.rec!.data.completedAt, null);

      // ...and fails it: failed, with the error and when it ended.
      await failExport(db(), claim, 'the object store refused the file', b.clock.now().toISOString());
      const f = await getOne(a, running.id);
      assert.equal(f.rec!.data.status, 'failed');
      assert.equal(f.rec!.data.error, 'the object store refused the file');
      assert.equal(f.rec!.data.completedAt, b.clock.now().toISOString());
      assert.equal(f.rec!.data.sha256, null);

      // The queued one runs to completion: its counts are those of the file the store recorded.
      await drainBulkWork(b.h.deps, { crawl: false });
      const c = await getOne(a, queued.id);
      const row = (await findExport(db(), queued.id))!;
      assert.equal(row.status, 'completed');
      assert.equal(c.rec!.data.status, 'completed');
      assert.equal(c.rec!.data.tweetCount, Number(row.tweet_count));
      assert.ok(c.rec!.data.tweetCount! > 0, 'the watched accounts posted in that hour');
      assert.equal(c.rec!.data.sizeBytes, Number(row.size_bytes));
      assert.match(c.rec!.data.sha256!, /^[0-9a-f]{64}$/);
      assert.equal(c.rec!.data.sha256, row.sha256);
      assert.equal(c.rec!.data.error, null);
      assert.ok(c.rec!.data.startedAt && c.rec!.data.completedAt);
      assert.ok(Value.Check(ExportRecord, c.rec!.data));

      // The same as the list and latest say about it.
      const latest = json<{ data: Rec }>(await call(b.h, a, 'GET', `${BASE}/exports/latest`)).data;
      assert.deepEqual(latest, c.rec!.data);
      const listed = json<{ items: Rec[] }>(await call(b.h, a, 'GET', `${BASE}/exports`)).items;
      assert.deepEqual(listed.find((e) => e.id === queued.id), c.rec!.data);
      assert.deepEqual(listed.find((e) => e.id === running.id), f.rec!.data);

      assert.equal((await getBalance(db(), a.accountId))!.balance, before, 'nothing charged');
      assert.equal(await ledgerSum(db(), a.accountId), before);
    });

    test("another account's export is 404 not_found, exactly like an id that never existed", async () => {
      const mine = await generate(a, 7);
      const theirs = await getOne(other, mine.id);
      const never = await getOne(other, '123456789012345');
      for (const { res } of [theirs, never]) {
        assert.equal(res.statusCode, 404);
        assert.equal(errorOf(res).code, 'not_found');
        assert.equal(res.headers['x-credits-charged'], '0');
      }
      const strip = (body: string) => JSON.parse(body.replaceAll(mine.id, 'ID').replaceAll('123456789012345', 'ID')) as { error: unknown };
      assert.deepEqual(strip(theirs.res.body).error, strip(never.res.body).error, 'the same answer for both');
      assert.equal((await getOne(a, mine.id)).res.statusCode, 200, 'the owner still sees it');
    });

    test('a malformed id is 400 invalid_request; latest is still the route it was', async () => {
      for (const id of ['abc', '12x', '12345678901234567890']) {
        const res = await call(b.h, a, 'GET', `${BASE}/exports/${id}`);
        assert.equal(res.statusCode, 400, id);
        assert.equal(errorOf(res).code, 'invalid_request');
      }
      const latest = await call(b.h, a, 'GET', `${BASE}/exports/latest`);
      assert.equal(latest.statusCode, 200, latest.body);
    });

    test('an unknown or missing key is 401 before anything else', async () => {
      const res = await b.h.app.inject({ url: `${BASE}/exports/1` });
      assert.equal(res.statusCode, 401);
      assert.equal(errorOf(res).code, 'missing_api_key');
    });

    test('in the OpenAPI document as getExport, at cost 0', async () => {
      const doc = json<{ paths: Record<string, { get?: { operationId?: string } }> }>(await b.h.app.inject({ url: '/openapi.json' }));
      assert.equal(doc.paths['/social/v1/bulk-export/exports/{id}']?.get?.operationId, 'getExport');
      assert.equal(b.h.config.costs.getExport, 0);
    });
  });
}
