import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type SQLite from 'better-sqlite3';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestStore, type TestStore } from '../helpers/backends.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';

// Rerunnable jobs skip their savepoints; one that throws part-way must still leave nothing behind,
// and the turn's other jobs must each take effect once.
describe('SQLite group commit: rerunnable jobs', () => {
  let ts: TestStore;
  let sqlite: SQLite.Database;
  let grouped: NonNullable<TestStore['store']['grouped']>;
  before(async () => {
    ts = await createTestStore('sqlite');
    await migrateToLatest(ts.store);
    sqlite = ts.store.sqlite!;
    grouped = ts.store.grouped!;
  });
  after(() => ts.dispose());

  const put = (key: string) => sqlite.prepare('insert into settings (key, value) values (?, ?)').run(key, 'x');
  const keys = () => sqlite.prepare('select key from settings order by key').pluck().all();

  test('a throw part-way undoes only that job; the others commit, the plain one runs once', async () => {
    let plainRuns = 0;
    const results = await Promise.allSettled([
      grouped(() => (put('a1'), 'a'), { rerunnable: true }),
      grouped(() => {
        plainRuns++;
        put('p1');
        return 'p';
      }),
      grouped(
        () => {
          put('bad1');
          throw new Error('part-way');
        },
        { rerunnable: true },
      ),
      grouped(() => (put('c1'), 'c'), { rerunnable: true }),
    ]);
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      ['a', 'p', 'part-way', 'c'],
    );
    assert.equal(plainRuns, 1);
    assert.deepEqual(keys(), ['a1', 'c1', 'p1']);
  });

  test('a turn of rerunnable jobs alone commits them all', async () => {
    const r = await Promise.all([grouped(() => put('d1').changes, { rerunnable: true }), grouped(() => put('e1').changes, { rerunnable: true })]);
    assert.deepEqual(r, [1, 1]);
    assert.deepEqual(keys(), ['a1', 'c1', 'd1', 'e1', 'p1']);
  });
});

// The turn's charges are a rerunnable job too (sqlite-meter-store.ts): when a job queued after them
// throws, the transaction is rolled back and they run again; each call must be charged once, not
// taken for gone because the first run had ended its hold.
describe('SQLite charges in a turn rolled back by another job', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('sqlite');
  });
  after(() => h.close());

  test('each call is charged exactly once, its hold ended, the ledger equal to the balance', async () => {
    const a = await h.account({ credits: 1_000 });
    const meter = h.deps.meter;
    const grouped = h.deps.store.grouped!;
    const charges = [1, 2, 3].map((i) => {
      const held = meter.tryReserveSync!(a.accountId, 100);
      assert.ok(held?.ok);
      return meter.settle(held.reservationId, { requestId: `req_rerun_${i}`, keyId: null, endpoint: 'echoHello' });
    });
    // Queued after the charges, in the same turn: it throws once they have run.
    const bad = grouped(
      () => {
        h.deps.store.sqlite!.prepare("insert into settings (key, value) values ('rerun-bad', 'x')").run();
        throw new Error('part-way');
      },
      { rerunnable: true },
    );
    const settled = await Promise.all(charges);
    await assert.rejects(bad, /part-way/);
    assert.deepEqual(
      settled.map((s) => s?.charged),
      [100, 100, 100],
    );
    assert.deepEqual(
      settled.map((s) => s?.balance),
      [900, 800, 700],
    );
    assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 700);
    assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 700);
    const entries = await h.deps.store.db.selectFrom('ledger_entries').select(['request_id']).where('account_id', '=', a.accountId).where('kind', '=', 'charge').orderBy('id').execute();
    assert.deepEqual(
      entries.map((e) => e.request_id),
      ['req_rerun_1', 'req_rerun_2', 'req_rerun_3'],
    );
    assert.equal(meter.heldHere?.(a.accountId) ?? 0, 0, 'no credits left held');
    // The rolled-back job left nothing.
    assert.equal((h.deps.store.sqlite!.prepare("select count(*) as n from settings where key = 'rerun-bad'").get() as { n: number }).n, 0);
  });
});
