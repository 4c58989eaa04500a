// Changing SECRET with the old value as SECRET_PREVIOUS: the cursors and download links given out
// before still work, new ones are signed with the new secret only, and once SECRET_PREVIOUS is
// dropped the old ones are refused. Ledger ids (led_…) stay the same throughout: their key is kept
// in the store, made once from the secret of the first start, so the ids given out before it was
// kept are the ids served after.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { grant } from '../../src/credits/credits-repo.js';
import { OpaqueIds } from '../../src/domain/opaque-ids.js';
import { buildApp } from '../../src/http/app.js';
import type { App } from '../../src/http/types.js';
import { drainBulkWork } from '../../src/wiring/drain-jobs.js';
import { buildDeps } from '../../src/wiring/deps.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, type TestAccount } from '../helpers/harness.js';
import { BASE, bulkHarness, call, HOUR, T0, type BulkHarness } from '../bulk/helpers.js';

const A = 'a-secret-of-at-least-32-characters-0001';
const B = 'b-secret-of-at-least-32-characters-0002';

type UsagePage = { items: Array<{ id: string; amount: number }>; nextCursor: string | null };

for (const backend of backends()) {
  describe(`SECRET rotation (${backend})`, () => {
    let b: BulkHarness;
    let acct: TestAccount;
    let exportId: string;
    const opened: Array<() => Promise<void>> = [];

    /** Another process on the same store with other settings, as after a restart. */
    const processWith = async (env: Record<string, string>): Promise<App> => {
      const config = loadConfig({ LOG_LEVEL: 'silent', AUTH_FAILURES_PER_MINUTE: '1000000', ...b.h.testStore.env, ...env });
      const deps = await buildDeps(config, { store: b.h.testStore.store, migrate: false, overrides: { source: b.h.deps.source } });
      deps.bulk.clock = b.clock.now;
      const app = await buildApp(deps, { logger: false });
      await app.ready();
      opened.push(async () => {
        await app.close();
        await deps.meter.close?.();
        await deps.rateLimiter.close?.();
      });
      return app;
    };
    const get = (app: App, url: string) => app.inject({ url, headers: { 'x-api-key': acct.apiKey } });
    const usage = async (app: App, cursor?: string) => {
      const res = await get(app, `/api/v1/usage?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      return { res, page: res.statusCode === 200 ? json<UsagePage>(res) : undefined };
    };
    const link = async (app: App): Promise<string> => {
      const res = await get(app, `${BASE}/exports/${exportId}/download`);
      assert.equal(res.statusCode, 200, res.body);
      return new URL(json<{ data: { url: string } }>(res).data.url).pathname + new URL(json<{ data: { url: string } }>(res).data.url).search;
    };
    const download = (app: App, path: string) => app.inject({ url: path });

    before(async () => {
      b = await bulkHarness(backend, { SECRET: A });
      acct = await b.h.account({ credits: 500 });
      for (const n of [1, 2, 3]) await grant(b.h.deps.store.db, acct.accountId, n, `g${n}`);
      await call(b.h, acct, 'POST', `${BASE}/watchlist/batch`, { items: b.sample.userIds.slice(0, 2).map((socialUserId) => ({ socialUserId })) });
      await drainBulkWork(b.h.deps);
      const gen = await call(b.h, acct, 'POST', `${BASE}/exports/generate`, { startDate: new Date(T0 - 3 * HOUR).toISOString(), endDate: new Date(T0 - 2 * HOUR).toISOString() });
      assert.equal(gen.statusCode, 202, gen.body);
      exportId = json<{ data: { id: string } }>(gen).data.id;
      await drainBulkWork(b.h.deps);
    });
    after(async () => {
      for (const close of opened) await close();
      await b.h.close();
    });

    test('old cursors and links work while SECRET_PREVIOUS holds the old secret, and not after; ledger ids never change', async () => {
      // Given out under A.
      const first = await usage(b.h.app);
      assert.equal(first.res.statusCode, 200, first.res.body);
      const cursorA = first.page!.nextCursor!;
      assert.ok(cursorA, 'the ledger has more than one page');
      const idsA = first.page!.items.map((i) => i.id);
      const rest = (await usage(b.h.app, cursorA)).page!.items.map((i) => i.id);
      const linkA = await link(b.h.app);
      const fileA = await download(b.h.app, linkA);
      assert.equal(fileA.statusCode, 200, fileA.body);

      // The ids are those the secret itself keyed before the key was kept in the store.
      const seqs = await b.h.deps.store.db.selectFrom('ledger_entries').select('id').where('account_id', '=', acct.accountId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
      const derived = new OpaqueIds(OpaqueIds.keyFrom(A, 'led'), 'led');
      assert.deepEqual([...idsA, ...rest], seqs.map((r) => derived.encode(r.id)));

      // Rotated: B signs, A is still accepted.
      const rotating = await processWith({ SECRET: B, SECRET_PREVIOUS: A });
      const cont = await usage(rotating, cursorA);
      assert.equal(cont.res.statusCode, 200, cont.res.body);
      assert.deepEqual(cont.page!.items.map((i) => i.id), rest, 'the same next page, with the same ids');
      const old = await download(rotating, linkA);
      assert.equal(old.statusCode, 200, old.body);
      assert.equal(old.rawPayload.length, fileA.rawPayload.length);
      const again = await usage(rotating);
      assert.deepEqual(again.page!.items.map((i) => i.id), idsA, 'ledger ids do not change with the secret');
      const cursorB = again.page!.nextCursor!;
      const linkB = await link(rotating);

      // What the rotating process gives out is signed with B alone: a process still on A refuses it.
      const stillA = await processWith({ SECRET: A });
      const refusedB = await usage(stillA, cursorB);
      assert.equal(refusedB.res.statusCode, 400);
      assert.equal(errorOf(refusedB.res).code, 'invalid_cursor');
      assert.equal((await download(stillA, linkB)).statusCode, 404);

      // Rotation over: only B. The old ones are refused, the new ones work, the ids are the same.
      const done = await processWith({ SECRET: B });
      const refusedA = await usage(done, cursorA);
      assert.equal(refusedA.res.statusCode, 400);
      assert.equal(errorOf(refusedA.res).code, 'invalid_cursor');
      assert.equal(refusedA.res.headers['x-credits-charged'], '0');
      const gone = await download(done, linkA);
      assert.equal(gone.statusCode, 404);
      assert.equal(errorOf(gone).code, 'not_found');
      assert.deepEqual((await usage(done, cursorB)).page!.items.map((i) => i.id), rest);
      assert.equal((await download(done, linkB)).statusCode, 200);
      assert.deepEqual((await usage(done)).page!.items.map((i) => i.id), idsA);
    });
  });
}

test('SECRET_PREVIOUS: only beside SECRET, and as long as a secret', () => {
  assert.throws(() => loadConfig({ SECRET_PREVIOUS: A }), /SECRET_PREVIOUS is the secret SECRET replaced/);
  assert.throws(() => loadConfig({ SECRET: B, SECRET_PREVIOUS: 'short' }), /SECRET_PREVIOUS must be at least 32 characters/);
  assert.equal(loadConfig({ SECRET: B, SECRET_PREVIOUS: A }).secretPrevious, A);
});
