import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { GroupCommit } from '../../src/db/group-commit.js';
import { createAccount } from '../../src/accounts/accounts-repo.js';
import { getBalance, grant } from '../../src/credits/credits-repo.js';
import { startHarness, type Harness } from '../helpers/harness.js';

describe('SQLite group commit beside Kysely transactions on the same connection', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('sqlite');
  });
  after(() => h.close());

  test("a charge made while another transaction is open survives that transaction's rollback", async () => {
    const db = h.deps.store.db;
    const { accountId } = await createAccount(db, { name: 'g', planId: 'free' });
    await grant(db, accountId, 100, 't');
    const hold = await h.deps.meter.reserve(accountId, 40);
    assert.ok(hold.ok);
    let pending: ReturnType<typeof h.deps.meter.settle> | undefined;
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('settings').values({ key: 'doomed', value: 'x' }).execute();
        pending = h.deps.meter.settle(hold.reservationId, { requestId: 'req_g', keyId: null, endpoint: 'e' });
        await new Promise((r) => setImmediate(r)); // the group commit's turn comes while we are open
        await new Promise((r) => setImmediate(r));
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.deepEqual(await pending!, { charged: 40, balance: 60 });
    assert.equal(await db.selectFrom('settings').select('key').where('key', '=', 'doomed').executeTakeFirst(), undefined);
    assert.deepEqual(await getBalance(db, accountId), { balance: 60, reserved: 0 });
    const charges = await db.selectFrom('ledger_entries').select(['amount', 'request_id']).where('account_id', '=', accountId).where('kind', '=', 'charge').execute();
    assert.deepEqual(charges, [{ amount: -40, request_id: 'req_g' }]);
  });
});

describe('SQLite group commit held', () => {
  // A table of numbers in memory, the group commit on it, and its insert.
  const numbers = () => {
    const sqlite = new SQLite(':memory:');
    sqlite.exec('create table t (n integer not null)');
    return { sqlite, group: new GroupCommit(sqlite), insert: sqlite.prepare('insert into t (n) values (?)') };
  };
  const turns = async () => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };

  test('held jobs wait while the event loop goes on, then run together on release; a second release does nothing', async () => {
    const { sqlite, group, insert } = numbers();
    try {
      const release = group.hold();
      let ran = 0;
      const jobs = [1, 2, 3].map((n) => group.run(() => (ran++, insert.run(n).changes)));
      // Several turns and a timer go by: the loop is free, the jobs have not run.
      await turns();
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(ran, 0);
      assert.equal(sqlite.prepare('select count(*) from t').pluck().get(), 0);
      const late = group.run(() => insert.run(4).changes);
      release();
      release();
      assert.deepEqual(await Promise.all([...jobs, late]), [1, 1, 1, 1]);
      assert.deepEqual(sqlite.prepare('select n from t order by rowid').pluck().all(), [1, 2, 3, 4]);
      // Not held any more: a job runs at the next turn.
      assert.equal(await group.run(() => insert.run(5).changes), 1);
    } finally {
      sqlite.close();
    }
  });
  test('a hold of the bulk jobs lets the others run; an all hold on top stops them; the bulk ones run in order on release', async () => {
    const { sqlite, group, insert } = numbers();
    try {
      const releaseBulk = group.hold('bulk');
      const bulk = [1, 2].map((n) => group.run(() => insert.run(n).changes, { bulk: true, rerunnable: true }));
      // The others are not held: one queued after the bulk jobs runs before them.
      assert.equal(await group.run(() => insert.run(10).changes), 1);
      await turns();
      assert.deepEqual(sqlite.prepare('select n from t order by rowid').pluck().all(), [10]);
      const releaseAll = group.hold('all');
      const other = group.run(() => insert.run(11).changes);
      const bulk3 = group.run(() => insert.run(3).changes, { bulk: true });
      await turns();
      assert.deepEqual(sqlite.prepare('select n from t order by rowid').pluck().all(), [10], 'the all hold stops every job');
      releaseAll();
      assert.equal(await other, 1);
      await turns();
      assert.deepEqual(sqlite.prepare('select n from t order by rowid').pluck().all(), [10, 11], 'the bulk hold still stands');
      releaseBulk();
      assert.deepEqual(await Promise.all([...bulk, bulk3]), [1, 1, 1]);
      assert.deepEqual(sqlite.prepare('select n from t order by rowid').pluck().all(), [10, 11, 1, 2, 3]);
    } finally {
      sqlite.close();
    }
  });
});
