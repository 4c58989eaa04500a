// Postgres metering on leases: exact across processes, idle leases given back to whoever needs
// them, a killed process's leases swept within a minute. Needs TEST_DATABASE_URL (skipped without).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts-repo.js';
import { getBalance, grant, ledgerSum } from '../../src/credits/credits-repo.js';
import type { ChargeInfo } from '../../src/credits/meter-store.js';
import { PostgresMeterStore } from '../../src/credits/postgres-meter-store.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { AppError } from '../../src/errors/app-error.js';
import { createTestStore, type TestStore } from '../helpers/backends.js';
import { runSdg, startServer, until, type ServerProcess } from '../helpers/processes.js';
import { sql } from 'kysely';

const pg = process.env.TEST_DATABASE_URL;
const info = (requestId: string): ChargeInfo => ({ requestId, keyId: null, endpoint: 'e' });

/** reserve, then settle: true if charged, false if refused (402 at reserve or at settle). */
async function call(m: PostgresMeterStore, accountId: string, cost: number, id: string): Promise<boolean> {
  const r = await m.reserve(accountId, cost);
  if (!r.ok) return false;
  try {
    return (await m.settle(r.reservationId, info(id))) !== undefined;
  } catch (e) {
    if ((e as AppError).code === 'insufficient_credits') return false;
    throw e;
  }
}

describe('credit leases (postgres)', { skip: !pg }, () => {
  let ts: TestStore;
  const stores: PostgresMeterStore[] = [];
  const meter = () => {
    // As meterStoreFor builds it: the group charges on the store's charge sessions (generic plans).
    const m = new PostgresMeterStore(ts.store.db, { leaseSeconds: 30 }, ts.store.chargeDb);
    stores.push(m);
    return m;
  };
  const account = async (credits: number) => {
    const { accountId } = await createAccount(ts.store.db, { name: 'l', planId: 'free' });
    await grant(ts.store.db, accountId, credits, 't');
    return accountId;
  };
  before(async () => {
    ts = await createTestStore('postgres');
    await migrateToLatest(ts.store);
  });
  /** A session of this database waits for a lock in a statement whose text holds `text`. */
  const waitsFor = async (text: string) =>
    Number((await sql<{ n: string }>`select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database() and position(${text} in query) > 0`.execute(ts.store.db)).rows[0]!.n) > 0;
  /** As if `m` stalled past its lease time: its owner row expired, its leases ready to be swept. */
  const expire = (m: PostgresMeterStore) =>
    ts.store.db.updateTable('credit_lease_owners').set({ expires_at: new Date(Date.now() - 60_000) }).where('owner', '=', m.owner).execute();
  /** `tries` calls of 1 credit each on `m`: how many were charged. */
  const spendAll = async (m: PostgresMeterStore, accountId: string, tries: number) => {
    let ok = 0;
    for (let i = 0; i < tries; i++) if (await call(m, accountId, 1, `spend-${accountId}-${i}`)) ok++;
    return ok;
  };
  /** In the group charge's text only. */
  const GROUP = 'where owner = $3 and epoch = $11';
  after(async () => {
    for (const m of stores) await m.close();
    await ts.dispose();
  });

  test('three processes spending one account at once: exactly the credits, ledger = balance, every lease given back', async () => {
    const COST = 3;
    const N = 500;
    const a = await account(COST * N);
    const ms = [meter(), meter(), meter()];
    const results = await Promise.all(Array.from({ length: 4 * N }, (_, i) => call(ms[i % 3]!, a, COST, `r${i}`)));
    assert.equal(results.filter(Boolean).length, N);
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 0, reserved: 0 });
    assert.equal(await ledgerSum(ts.store.db, a), 0);
    const charges = await ts.store.db.selectFrom('ledger_entries').select(['balance_after', 'request_id']).where('account_id', '=', a).where('kind', '=', 'charge').execute();
    assert.equal(charges.length, N);
    // Each charge's balance after is a distinct step down: every charge applied once.
    assert.deepEqual(charges.map((c) => Number(c.balance_after)).sort((x, y) => x - y), Array.from({ length: N }, (_, i) => i * COST));
  });

  test("two processes charging the same accounts at once: their groups lock the accounts in id order, so none is a deadlock's victim", { timeout: 30_000 }, async () => {
    // Before, the group's update locked its accounts in whatever order its plan read them: groups of
    // two processes over the same accounts deadlocked (here, without the fix, once in 6 s in most runs), each victim waiting out
    // Postgres's deadlock_timeout (1 s) before it was sent again.
    const accounts = await Promise.all(Array.from({ length: 16 }, () => account(1_000_000)));
    // On the store's ordinary sessions, where Postgres plans each group for its values (a hash join
    // here): the order must not depend on the plan (on the charge sessions' generic plan an index
    // scan happened to read them in id order, a bitmap scan would not).
    const ms = [0, 1].map(() => {
      const m = new PostgresMeterStore(ts.store.db, { leaseSeconds: 30 });
      stores.push(m);
      return m;
    });
    let stop = false;
    let n = 0;
    const caller = async (m: PostgresMeterStore, a: string) => {
      while (!stop) {
        assert.ok(await call(m, a, 1, `dl-${n++}`));
        await new Promise((r) => setTimeout(r, Math.random() * 2));
      }
    };
    const running = ms.flatMap((m) => accounts.flatMap((a) => [caller(m, a), caller(m, a), caller(m, a)]));
    await new Promise((r) => setTimeout(r, 6_000));
    stop = true;
    await Promise.all(running);
    assert.deepEqual(ms.map((m) => m.stats.groupDeadlocks), [0, 0], `after ${n} charges`);
    assert.ok(ms.every((m) => m.stats.groupCharges > 100), 'both processes charged');
    for (const m of ms) await m.close();
    for (const a of accounts) assert.equal(await ledgerSum(ts.store.db, a), (await getBalance(ts.store.db, a))!.balance);
  });

  test('in steady use the next slice is leased ahead: after the first call, none waits for a lease', async () => {
    // Before, a call that found its slice spent leased the next one itself, and every call of the
    // account behind it waited for that statement (with 50 accounts under load, 1 to 3% of calls,
    // which set the p99: docs/benchmarks.md). Now the next slice is leased when a quarter is left.
    const COST = 5;
    const N = 2_000;
    const a = await account(COST * N + 1_000);
    const m = meter();
    let waited = 0;
    for (let i = 0; i < N; i++) {
      let r = m.tryReserveSync(a, COST);
      if (!r) {
        waited++;
        r = await m.reserve(a, COST);
      }
      assert.ok(r.ok);
      assert.ok(await m.settle(r.reservationId, info(`s${i}`)));
    }
    // The slices double from 8 calls: without leasing ahead, 8 of these calls would wait. With it,
    // the first small slices may still run out on a loaded host (a quarter of 8 calls is 2 group
    // commits, which can outrun the statement leasing ahead); half of 8 keeps the two apart.
    assert.ok(waited <= 4, `${waited} calls waited for a lease`);
    // What /metrics reports: the same waits, the slices leased ahead, one group per call (each awaited).
    // A call that finds its slice spent while the next is still being leased ahead (a slow host)
    // waits for that statement rather than sending its own: waits can outnumber call leases.
    const { ahead, call } = m.stats.leases;
    assert.equal(m.stats.callsWaited, waited);
    assert.ok(call.granted >= 1 && call.granted <= waited, `${call.granted} call leases for ${waited} waits`);
    assert.equal(call.refused, 0);
    assert.ok(ahead.granted >= 5, `${ahead.granted} slices leased ahead`);
    assert.equal(m.stats.leaseSeconds.count, ahead.granted + ahead.refused + call.granted);
    assert.equal(m.stats.groupCharges, N);
    assert.equal(m.stats.groupSeconds.count, N);
    assert.equal(m.stats.now().accounts, 1);
    assert.ok(m.stats.now().unheld > 0);
    await m.close();
    assert.equal(m.stats.givenBack.close, 1);
    assert.equal(m.stats.now().unheld, 0);
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 1_000, reserved: 0 });
    assert.equal(await ledgerSum(ts.store.db, a), 1_000);
  });

  test('a slice leased ahead lands before its process answers an ask: the asker gets the credits', async () => {
    // The other process (y) spends its slice until a quarter is left, which starts leasing the next
    // one ahead; that statement is held back until y has answered x's ask (or, if y waits for it
    // first, 300 ms after the ask). Had y answered before the slice landed, the slice would sit in y
    // for no call while x, told everyone had answered, refused a call the account could pay.
    const COST = 10;
    const a = await account(1_000);
    const [x, y] = [meter(), meter()];
    type Leasing = { tryLease(id: string, amount: number, ask: boolean): Promise<unknown>; giveBack(id: string, amount: number): Promise<void> };
    const xs = (x as unknown as { statements: Leasing }).statements;
    const ys = (y as unknown as { statements: Leasing }).statements;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const xLease = xs.tryLease.bind(xs);
    xs.tryLease = async (id, amount, ask) => {
      const row = await xLease(id, amount, ask);
      if (ask) setTimeout(release, 300);
      return row;
    };
    const yGiveBack = ys.giveBack.bind(ys);
    ys.giveBack = async (id, amount) => {
      await yGiveBack(id, amount);
      release();
    };
    assert.ok(await call(y, a, COST, 'y0'), "y's first call leases a slice of 8 calls");
    const yLease = ys.tryLease.bind(ys);
    let heldBack = 0;
    ys.tryLease = async (id, amount, ask) => {
      heldBack++;
      await released;
      return yLease(id, amount, ask);
    };
    for (let i = 1; i < 7; i++) assert.ok(await call(y, a, COST, `y${i}`));
    assert.equal(heldBack, 1, 'the next slice is being leased ahead');
    // 930 credits are not in y's calls (920 free, 10 in y's slice); x needs 925 of them.
    const r = await x.reserve(a, 925);
    assert.ok(r.ok, `refused: ${JSON.stringify(r)}`);
    assert.ok(await x.settle(r.reservationId, info('x0')));
    await x.close();
    await y.close();
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 5, reserved: 0 });
    assert.equal(await ledgerSum(ts.store.db, a), 5);
  });

  test('a lease idle in another process does not refuse a call the account can pay', async () => {
    const a = await account(100);
    const [one, two] = [meter(), meter()];
    // The first process leases more than its call needs (a slice), spends 10, keeps the rest.
    assert.ok(await call(one, a, 10, 'x1'));
    const leased = (await getBalance(ts.store.db, a))!.reserved;
    assert.ok(leased > 0, 'the first process keeps a lease');
    // The second needs what only the first one's idle lease holds: it asks, and gets it.
    const t0 = Date.now();
    assert.ok(await call(two, a, 90, 'x2'));
    assert.ok(Date.now() - t0 < 1_000, `answered in ${Date.now() - t0} ms`);
    assert.equal(two.stats.asks, 1);
    assert.equal(one.stats.givenBack.asked, 1);
    assert.equal(two.stats.callsRefused, 0);
    assert.deepEqual(await two.reserve(a, 1), { ok: false, available: 0 });
    assert.equal(two.stats.callsRefused, 1);
    assert.equal((await getBalance(ts.store.db, a))!.balance, 0);
    assert.equal(await ledgerSum(ts.store.db, a), 0);
  });

  test('a hold a call still needs is not given away, and the refusal says what is available', async () => {
    const a = await account(50);
    const [one, two] = [meter(), meter()];
    const held = await one.reserve(a, 40);
    assert.ok(held.ok);
    const refused = await two.reserve(a, 20);
    assert.deepEqual(refused, { ok: false, available: 10 });
    assert.deepEqual(await one.settle(held.reservationId, info('h')), { charged: 40, balance: 10 });
    assert.ok(await call(two, a, 10, 'h2'));
    assert.equal((await getBalance(ts.store.db, a))!.balance, 0);
  });

  test('a lease not renewed expires and is swept back; a charge on a swept lease is taken from the balance if it is there', async () => {
    const a = await account(30);
    const m = meter();
    const r = await m.reserve(a, 10);
    assert.ok(r.ok);
    // Its first renewal done (the next in 10 s), on a slow host too: one landing after the stall below would undo it.
    await until('the first renewal', 10_000, () => m['lastRenewAt'] > 0 && !m['ticking']);
    // As if the process stalled: it stops renewing, its lease expires, another process sweeps it.
    await expire(m);
    const other = meter();
    const swept = await other.sweep();
    assert.ok(swept >= 1);
    assert.equal(other.stats.leasesSwept, swept);
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 30, reserved: 0 });
    // The stalled process's charge still goes through, from the available balance.
    assert.deepEqual(await m.settle(r.reservationId, info('late')), { charged: 10, balance: 20 });
    assert.deepEqual([m.stats.leasesLost, m.stats.groupFailures, m.stats.directCharges], [1, 1, 1]);
    assert.ok(await call(other, a, 20, 'rest'));
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 0, reserved: 0 });
    assert.equal(await ledgerSum(ts.store.db, a), 0);
  });
  test('a dead process whose lease cannot be given back does not keep another dead process\'s credits reserved', async () => {
    const [a, b] = [await account(100), await account(100)];
    const [ma, mb] = [meter(), meter()];
    assert.ok((await ma.reserve(a, 10)).ok);
    assert.ok((await mb.reserve(b, 10)).ok);
    for (const m of [ma, mb]) {
      await until('the first renewal', 10_000, () => m['lastRenewAt'] > 0 && !m['ticking']);
      clearInterval(m['timer']);
      m['timer'] = undefined;
      await expire(m);
    }
    // A's lease row says more than the account holds reserved (what a lost answer once left):
    // giving it back breaks accounts_reserved_check. Before, that failed the sweep of every process.
    await ts.store.db.updateTable('credit_leases').set({ amount: sql`amount + 1000` }).where('owner', '=', ma.owner).execute();
    const other = new PostgresMeterStore(ts.store.db, { leaseSeconds: 30 });
    await assert.rejects(other.sweep(), /accounts_reserved_check/);
    assert.equal((await getBalance(ts.store.db, b))?.reserved, 0, "B's dead lease was given back all the same");
    assert.equal((await ts.store.db.selectFrom('credit_leases').select('owner').where('owner', '=', mb.owner).execute()).length, 0);
    // Put right, A's goes too.
    await ts.store.db.updateTable('credit_leases').set({ amount: sql`amount - 1000` }).where('owner', '=', ma.owner).execute();
    assert.ok((await other.sweep()) >= 1);
    assert.equal((await getBalance(ts.store.db, a))?.reserved, 0);
    stores.splice(stores.indexOf(ma), 1);
    stores.splice(stores.indexOf(mb), 1);
  });

  // Migration 014: a group leaves the lease rows alone; the ledger names the process a charge was
  // spent from, and the rows are brought up to date every second.
  test('what a lease spent since its last sync is not given back by the sweep of its dead process: the rest is, exactly', async () => {
    const a = await account(100);
    const m = meter();
    // No sync meanwhile: all 30 charges are after the row's synced_id.
    m['unsynced']['lastAt'] = Infinity;
    for (let i = 0; i < 30; i++) assert.ok(await call(m, a, 1, `s${i}`));
    const rows = () => ts.store.db.selectFrom('credit_leases').select(['amount', 'synced_id']).where('account_id', '=', a).where('owner', '=', m.owner).execute();
    const [leased] = await rows();
    const lease = m['leases'].get(a)!;
    const reserved = (await getBalance(ts.store.db, a))!.reserved;
    // The process dies: no more ticks (no sync, no renewal), no give-back.
    clearInterval(m['timer']);
    m['timer'] = undefined;
    await until('its tick done', 5_000, () => !m['ticking']);
    const unsynced = await ts.store.db.selectFrom('ledger_entries').select((eb) => eb.fn.countAll<string>().as('n')).where('account_id', '=', a).where(sql`lease_owner`, '=', m.owner).where('id', '>', leased!.synced_id).executeTakeFirstOrThrow();
    assert.equal(Number(unsynced.n), 30);
    // The row's amount less its later entries is what the process has left.
    assert.equal(Number(leased!.amount) - Number(unsynced.n), lease.leased);
    assert.equal(reserved, lease.leased);
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 70, reserved: lease.leased });
    await expire(m);
    const other = meter();
    assert.equal(await other.sweep(), 1);
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 70, reserved: 0 });
    // Exactly the 70 credits left are spendable: not one more (the spent ones given back twice), not one less.
    assert.equal(await spendAll(other, a, 75), 70);
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 0, reserved: 0 });
    assert.equal(await ledgerSum(ts.store.db, a), 0);
  });

  test('a sweep waits for the group in flight of the process it sweeps and counts its charge; that process\'s next group fails and charges from the balance', async () => {
    const a = await account(100);
    const m = meter();
    m['unsynced']['lastAt'] = Infinity;
    assert.ok(await call(m, a, 1, 'w0'));
    await until('the first renewal', 10_000, () => m['lastRenewAt'] > 0 && !m['ticking']);
    // As if the process stalled past its lease time (its group is in flight when the sweep starts).
    await expire(m);
    const other = meter();
    let settled: Promise<unknown> | undefined;
    let sweeping: Promise<number> | undefined;
    // The hold is taken before the account row is locked below: had the lease gone back meanwhile
    // (idle for a second on a slow host), reserve() would lease anew and wait for that lock for ever.
    const r = await m.reserve(a, 1);
    assert.ok(r.ok);
    m['leases'].get(a)!.lastUsedAt = Infinity; // nor does the rest go back idle while the rows are held
    await ts.store.db.transaction().execute(async (trx) => {
      // The account row held elsewhere: the group locks its owner row, then waits here.
      await sql`select id from accounts where id = ${a} for update`.execute(trx);
      settled = m.settle(r.reservationId, info('w1'));
      await until('the group waiting for the account row', 10_000, () => waitsFor(GROUP));
      // The sweep waits for the group's lock on the owner row.
      sweeping = other.sweep();
      await until('the sweep waiting for the owner row', 10_000, () => waitsFor('and expires_at < now() for update'));
    });
    assert.deepEqual(await settled, { charged: 1, balance: 98 });
    assert.equal(await sweeping, 1);
    // What the lease had left went back, less both charges.
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 98, reserved: 0 });
    // The swept process's next call: its group names the old epoch, fails, and is charged from the balance.
    assert.deepEqual(m.stats.groupFailures, 0);
    assert.ok(await call(m, a, 1, 'w2'));
    assert.deepEqual([m.stats.groupFailures, m.stats.directCharges], [1, 1]);
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 97, reserved: 0 });
    assert.equal(await spendAll(other, a, 100), 97);
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 0, reserved: 0 });
    assert.equal(await ledgerSum(ts.store.db, a), 0);
  });

  test('a group sent while a sweep of its process is under way waits for it, then fails: its charge comes from the balance, and another process\'s lease is untouched', async () => {
    const a = await account(100);
    const m = meter();
    const other = meter();
    assert.ok(await call(m, a, 1, 'v0'));
    assert.ok(await call(other, a, 1, 'v1'));
    // other's lease stays, however slow the host, for the comparison at the end.
    other['leases'].get(a)!.lastUsedAt = Infinity;
    await until('the first renewal', 10_000, () => m['lastRenewAt'] > 0 && !m['ticking']);
    await expire(m);
    const sweeper = meter();
    let sweeping: Promise<number> | undefined;
    let settled: Promise<unknown> | undefined;
    // Held before the rows are locked below (a reserve() that had to lease would wait for them for ever).
    const r = await m.reserve(a, 1);
    assert.ok(r.ok);
    m['leases'].get(a)!.lastUsedAt = Infinity; // nor does the rest go back idle while the rows are held
    await ts.store.db.transaction().execute(async (trx) => {
      // m's lease row held elsewhere: the sweep has m's owner row and the account row, and waits here.
      await sql`select 1 from credit_leases where owner = ${m.owner} and account_id = ${a} for update`.execute(trx);
      sweeping = sweeper.sweep();
      await until('the sweep waiting for the lease row', 10_000, () => waitsFor('delete from credit_leases l'));
      // m spends from its lease as if nothing happened: its group waits for its owner row.
      settled = m.settle(r.reservationId, info('v2'));
      await until('the group waiting for the owner row', 10_000, () => waitsFor(GROUP));
    });
    assert.equal(await sweeping, 1);
    assert.deepEqual(await settled, { charged: 1, balance: 97 });
    assert.deepEqual([m.stats.groupFailures, m.stats.directCharges], [1, 1]);
    // Had the group spent from the swept lease, the account's reserved would be short of other's lease.
    const l = other['leases'].get(a)!;
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 97, reserved: l.leased - l.held });
    await other.close();
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 97, reserved: 0 });
    assert.equal(await ledgerSum(ts.store.db, a), 97);
  });

  test('dropping a lease gives back what it has left: its amount less what its entries spent since the last sync', async () => {
    const a = await account(100);
    const m = meter();
    m['unsynced']['lastAt'] = Infinity;
    for (let i = 0; i < 5; i++) assert.ok(await call(m, a, 2, `d${i}`));
    const l = m['leases'].get(a)!;
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 90, reserved: l.leased });
    await m['dropLease'](l);
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: 90, reserved: 0 });
    assert.equal(await ts.store.db.selectFrom('credit_leases').select('amount').where('account_id', '=', a).executeTakeFirst(), undefined);
    assert.equal(await ledgerSum(ts.store.db, a), 90);
  });

  test('a sync folds what each lease spent into its row: its amount is then what the process has left', async () => {
    const a = await account(1_000);
    const b = await account(1_000);
    const m = meter();
    m['unsynced']['lastAt'] = Infinity;
    for (let i = 0; i < 20; i++) assert.ok(await call(m, i % 2 ? a : b, 3, `y${i}`));
    // Not folded in yet: each row still holds what it was granted.
    for (const acc of [a, b]) {
      const row = await ts.store.db.selectFrom('credit_leases').select('amount').where('account_id', '=', acc).where('owner', '=', m.owner).executeTakeFirstOrThrow();
      assert.equal(Number(row.amount), m['leases'].get(acc)!.leased + 30);
    }
    await m['syncSpent'](true);
    for (const acc of [a, b]) {
      const row = await ts.store.db.selectFrom('credit_leases').select(['amount', 'synced_id']).where('account_id', '=', acc).where('owner', '=', m.owner).executeTakeFirstOrThrow();
      const last = await ts.store.db.selectFrom('ledger_entries').select((eb) => eb.fn.max('id').as('id')).where(sql`lease_owner`, '=', m.owner).executeTakeFirstOrThrow();
      assert.equal(Number(row.amount), m['leases'].get(acc)!.leased, 'the row holds what is left');
      assert.equal(Number(row.synced_id), Number(last.id), "synced up to the process's last entry");
      assert.deepEqual(await getBalance(ts.store.db, acc), { balance: 970, reserved: Number(row.amount) });
    }
    // A second sync changes nothing.
    const before = await ts.store.db.selectFrom('credit_leases').selectAll().where('owner', '=', m.owner).orderBy('account_id').execute();
    await m['syncSpent'](true);
    assert.deepEqual(await ts.store.db.selectFrom('credit_leases').selectAll().where('owner', '=', m.owner).orderBy('account_id').execute(), before);
  });
});

describe('a killed API process (postgres)', { skip: !pg }, () => {
  let ts: TestStore;
  const servers: ServerProcess[] = [];
  before(async () => {
    ts = await createTestStore('postgres');
    await migrateToLatest(ts.store);
  });
  after(async () => {
    for (const s of servers) await s.stop();
    await ts.dispose();
  });

  test('its leases (a call in flight among them) are released within a minute: here the lease time plus a sweep', async () => {
    const COST = 5;
    const env = { ...ts.env, ROLES: 'api', COSTS: JSON.stringify({ echoHello: COST, getTweet: COST }), CREDIT_LEASE_SECONDS: '2', CREDIT_SWEEP_SECONDS: '0.5', DEMO_LATENCY_MS: '5000' };
    const doomed = await startServer(env);
    const survivor = await startServer(env);
    servers.push(doomed, survivor);
    const created = await runSdg(['accounts', 'create', '--name', 'k', '--credits', String(COST * 20), '--rate-limit-per-minute', '100000', '--json'], ts.env);
    const { accountId, apiKey } = JSON.parse(created.stdout) as { accountId: string; apiKey: string };
    const sample = JSON.parse((await runSdg(['demo', 'sample', '--json'], env)).stdout) as { tweetIds: string[] };
    const headers = { 'x-api-key': apiKey };
    // Two calls on the doomed process: one done (its lease keeps the rest of a slice), one in flight
    // (a tweet the slow source takes 5 s to fetch).
    assert.equal((await fetch(`${doomed.url}/echo/v1/hello`, { headers })).status, 200);
    void fetch(`${doomed.url}/social/v1/tweets/${sample.tweetIds[0]}`, { headers }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    const leased = (await getBalance(ts.store.db, accountId))!;
    assert.equal(leased.balance, COST * 19);
    assert.ok(leased.reserved >= COST * 2, `leased ${leased.reserved}`);
    await doomed.stop('SIGKILL');
    servers.splice(servers.indexOf(doomed), 1); // gone: nothing to stop after the test
    const killedAt = Date.now();
    // Every credit left becomes spendable on the survivor: 19 calls succeed, then 402.
    let ok = 0;
    while (ok < 19 && Date.now() - killedAt < 60_000) {
      const r = await fetch(`${survivor.url}/echo/v1/hello`, { headers });
      if (r.status === 200) ok++;
      else assert.equal(r.status, 402);
    }
    const took = Date.now() - killedAt;
    assert.equal(ok, 19);
    assert.ok(took < 10_000, `released after ${took} ms`);
    assert.equal((await fetch(`${survivor.url}/echo/v1/hello`, { headers })).status, 402);
    assert.deepEqual(await getBalance(ts.store.db, accountId), { balance: 0, reserved: 0 });
    assert.equal(await ledgerSum(ts.store.db, accountId), 0);
  });
});
