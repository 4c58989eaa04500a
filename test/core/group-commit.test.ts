import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

describe('SQLite group commit of crawl pages (bulk jobs) beside the calls', () => {
  // A file store (a second connection sees only what is committed), the group commit on it.
  const fileStore = (bulkCommitMs?: number) => {
    const dir = mkdtempSync(join(tmpdir(), 'sdg-group-'));
    const sqlite = new SQLite(join(dir, 'db.sqlite'));
    sqlite.pragma('journal_mode = WAL');
    // No sync: a commit's own time (an fsync here can take milliseconds) must not count as the pages'.
    sqlite.pragma('synchronous = OFF');
    sqlite.exec('create table t (n integer not null)');
    const reader = new SQLite(join(dir, 'db.sqlite'), { readonly: true });
    return {
      sqlite,
      group: new GroupCommit(sqlite, bulkCommitMs === undefined ? {} : { bulkCommitMs }),
      insert: sqlite.prepare('insert into t (n) values (?)'),
      committed: () => reader.prepare('select n from t order by rowid').pluck().all() as number[],
      close() {
        reader.close();
        sqlite.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  };
  const spin = (ms: number) => {
    for (const end = performance.now() + ms; performance.now() < end; );
  };

  test("a call's job queued in the same turn as crawl pages is committed before the pages run", async () => {
    const s = fileStore();
    try {
      const seenByPage: number[][] = [];
      const page = s.group.run(
        () => {
          seenByPage.push(s.committed());
          return s.insert.run(1).changes;
        },
        { bulk: true, rerunnable: true },
      );
      // Queued after the page, in the same turn.
      const call = s.group.run(() => s.insert.run(2).changes);
      assert.deepEqual(await Promise.all([page, call]), [1, 1]);
      assert.deepEqual(seenByPage, [[2]], "the call's row was committed when the page ran");
      assert.deepEqual(s.committed(), [2, 1]);
    } finally {
      s.close();
    }
  });

  // Six pages of about 6 ms each after a first one (whose commit learns what a page costs), with a
  // call's job beside the first one or not; the turns of the event loop each page ran on.
  const sixPages = async (withCalls: boolean) => {
    const s = fileStore(10);
    let turn = 0;
    let counting = true;
    const count = () => {
      turn++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    try {
      const ranAt: number[] = [];
      const page = (n: number) =>
        s.group.run(
          () => {
            ranAt.push(turn);
            spin(6);
            return s.insert.run(n).changes;
          },
          { bulk: true, rerunnable: true },
        );
      const first = [page(0), ...(withCalls ? [s.group.run(() => s.insert.run(99).changes)] : [])];
      assert.deepEqual(await Promise.all(first), withCalls ? [1, 1] : [1]);
      ranAt.length = 0;
      const pages = [1, 2, 3, 4, 5, 6].map(page);
      // A call arriving while the pages are being written (after the first of them has committed).
      const call = withCalls ? pages[0]!.then(() => s.group.run(() => s.insert.run(100).changes)) : undefined;
      assert.deepEqual(await Promise.all(pages), [1, 1, 1, 1, 1, 1]);
      if (call) assert.equal(await call, 1);
      const rows = s.committed();
      assert.deepEqual(rows.filter((n) => n < 99), [0, 1, 2, 3, 4, 5, 6], 'the pages commit in their order');
      return { ranAt, rows };
    } finally {
      // Also when an assertion fails: a counter left running would keep the test process alive.
      counting = false;
      s.close();
    }
  };

  test('while calls write, crawl pages beyond the commit time go in commits of their own, a turn of the event loop apart; a call queued meanwhile commits before the rest', async () => {
    const { ranAt, rows } = await sixPages(true);
    assert.equal(new Set(ranAt).size, 6, `one page a commit, each on a turn of its own: turns ${ranAt.join(',')}`);
    assert.ok(rows.indexOf(100) < rows.indexOf(6), `the call committed before the last page: ${rows.join(',')}`);
  });

  test('while calls write, pages that fit the commit time share a commit, also after commits of calls alone', async () => {
    const s = fileStore(10);
    try {
      const page = (n: number) => s.group.run(() => s.insert.run(n).changes, { bulk: true, rerunnable: true });
      const call = (n: number) => s.group.run(() => s.insert.run(n).changes);
      // A page's cost learnt beside a call, then turns with calls only.
      assert.deepEqual(await Promise.all([page(0), call(99)]), [1, 1]);
      for (let i = 0; i < 5; i++) assert.equal(await call(100 + i), 1);
      const before = Number(s.sqlite.prepare('select count(*) from t').pluck().get());
      const pages = [1, 2, 3, 4, 5, 6].map(page);
      const beside = call(200);
      // The turn's flush runs before this: all six (each far below 10 ms) in its one commit of pages.
      await new Promise((r) => setImmediate(r));
      assert.equal(s.sqlite.prepare('select count(*) from t').pluck().get(), before + 7);
      assert.deepEqual(await Promise.all([...pages, beside]), [1, 1, 1, 1, 1, 1, 1]);
    } finally {
      s.close();
    }
  });

  test('with no call writing, crawl pages queued together go in one commit, however long', async () => {
    const { ranAt } = await sixPages(false);
    assert.equal(new Set(ranAt).size, 1, `turns ${ranAt.join(',')}`);
  });
});
