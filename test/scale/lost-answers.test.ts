// Postgres metering when an answer from Postgres is lost: the connection fails after a statement was
// sent, so the process cannot tell whether it committed. A proxy (helpers/pg-answer-loss.ts) runs the
// chosen statement and drops its answer, or drops the statement itself, then resets the connection.
// Before, a group charge that committed unseen was answered 503 yet charged, its lease row no longer
// matched the account's reserved credits, and every sweep after it failed (a dead process's credits
// then stayed reserved for good); a sync whose answer was lost was sent again and counted twice.
// Needs TEST_DATABASE_URL (skipped without).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts-repo.js';
import { getBalance, grant, ledgerSum } from '../../src/credits/credits-repo.js';
import { CHARGE_GROUP } from '../../src/credits/lease-statements.js';
import { PostgresMeterStore } from '../../src/credits/postgres-meter-store.js';
import { openStore, type Store } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestStore, type TestStore } from '../helpers/backends.js';
import { PgAnswerLoss } from '../helpers/pg-answer-loss.js';
import { SETTLE_WAIT_MS } from '../../src/credits/lost-answers.js';
import { startRefunder } from '../../src/credits/refunder.js';
import type { AppError } from '../../src/errors/app-error.js';

const pg = process.env.TEST_DATABASE_URL;
const COST = 100;
/** A piece of each statement's text, as the proxy finds it. */
const GROUP = CHARGE_GROUP.slice(0, 60).trim();
const SYNC = 'set amount = c.amount - s.spent';
const LEASE = 'set reserved = reserved + ';

describe('answers lost between the gateway and Postgres (postgres)', { skip: !pg }, () => {
  let ts: TestStore;
  let proxy: PgAnswerLoss;
  let through: Store;
  const meters: PostgresMeterStore[] = [];
  const meter = () => {
    const m = new PostgresMeterStore(through.db, { leaseSeconds: 30 }, through.chargeDb);
    meters.push(m);
    return m;
  };
  const account = async (credits: number) => {
    const { accountId } = await createAccount(ts.store.db, { name: 'lost', planId: 'free' });
    await grant(ts.store.db, accountId, credits, 't');
    return accountId;
  };
  let seq = 0;
  /** One charged call: its request id and whether it was answered as charged. */
  const call = async (m: PostgresMeterStore, accountId: string): Promise<{ id: string; charged: boolean }> => {
    const id = `req_lost_${seq++}`;
    try {
      // A failure at either step is the call's 503 (a lease statement's, or its charge's).
      const r = await m.reserve(accountId, COST);
      if (!r.ok) return { id, charged: false };
      return { id, charged: (await m.settle(r.reservationId, { requestId: id, keyId: null, endpoint: 'e' })) !== undefined };
    } catch {
      return { id, charged: false };
    }
  };
  /** After the meter closed: nothing reserved or leased (a closed process's rows may stay, empty), the ledger sums to the balance, and it holds exactly the calls answered as charged. */
  const exact = async (accountId: string, credits: number, answers: Array<{ id: string; charged: boolean }>) => {
    assert.deepEqual(await getBalance(ts.store.db, accountId), { balance: credits - COST * answers.filter((a) => a.charged).length, reserved: 0 });
    assert.equal(await ledgerSum(ts.store.db, accountId), credits - COST * answers.filter((a) => a.charged).length);
    const leases = await ts.store.db.selectFrom('credit_leases').select('amount').where('account_id', '=', accountId).execute();
    assert.ok(leases.every((l) => Number(l.amount) === 0), `no credits left in a lease row: ${JSON.stringify(leases)}`);
    const entries = new Set((await ts.store.db.selectFrom('ledger_entries').select('request_id').where('account_id', '=', accountId).where('kind', '=', 'charge').execute()).map((e) => e.request_id));
    for (const a of answers) assert.equal(entries.has(a.id), a.charged, `${a.id}: answered ${a.charged ? 'charged' : 'uncharged'}`);
  };

  before(async () => {
    ts = await createTestStore('postgres');
    await migrateToLatest(ts.store);
    const url = new URL(ts.env.DATABASE_URL!);
    proxy = new PgAnswerLoss({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.start();
    url.host = `127.0.0.1:${proxy.port}`;
    through = openStore({ databaseUrl: url.toString(), dataDir: ts.dataDir });
  });
  after(async () => {
    for (const m of meters) await m.close().catch(() => undefined);
    await through.close();
    await proxy.close();
    await ts.dispose();
  });

  test('a group charge that committed but whose answer was lost: its calls are answered as charged, and a later sweep works', async () => {
    const credits = 100 * COST;
    const a = await account(credits);
    const m = meter();
    const answers = [await call(m, a), await call(m, a)];
    const lost = proxy.arm(GROUP);
    answers.push(...(await Promise.all(Array.from({ length: 5 }, () => call(m, a)))));
    await lost;
    assert.ok(answers.every((x) => x.charged), JSON.stringify(answers));
    assert.ok(m.stats.lostAnswers.charged >= 1, JSON.stringify(m.stats.lostAnswers));
    assert.equal(m.stats.settled, 1);
    // Calls go on (on new leases), and the process then stops without closing (as kill -9): another
    // sweeps its leases, exactly. Before, that sweep failed on accounts_reserved_check, every time.
    answers.push(...(await Promise.all(Array.from({ length: 5 }, () => call(m, a)))));
    clearInterval(m['timer']);
    m['timer'] = undefined;
    await ts.store.db.updateTable('credit_lease_owners').set({ expires_at: new Date(Date.now() - 60_000) }).where('owner', '=', m.owner).execute();
    const other = new PostgresMeterStore(ts.store.db, { leaseSeconds: 30 });
    assert.ok((await other.sweep()) >= 1);
    meters.splice(meters.indexOf(m), 1);
    await exact(a, credits, answers);
  });

  test('a group charge lost before it reached Postgres: its calls are answered with the failure, uncharged', async () => {
    const credits = 100 * COST;
    const a = await account(credits);
    const m = meter();
    const answers = [await call(m, a)];
    const lost = proxy.arm(GROUP, 'request');
    answers.push(...(await Promise.all(Array.from({ length: 4 }, () => call(m, a)))));
    await lost;
    assert.ok(m.stats.lostAnswers.notCharged >= 1, JSON.stringify(m.stats.lostAnswers));
    assert.ok(answers.some((x) => !x.charged));
    answers.push(await call(m, a));
    assert.equal(answers.at(-1)!.charged, true, 'calls go on after');
    await m.close();
    await exact(a, credits, answers);
  });

  test('a sync or a lease whose answer was lost leaves no credits reserved: the process settles, from the ledger', async () => {
    const credits = 20_000 * COST;
    const a = await account(credits);
    const m = meter();
    const answers = [await call(m, a)];
    // The sync runs about once a second while calls spend.
    const syncLost = proxy.arm(SYNC);
    while (m.stats.settled === 0) answers.push(await call(m, a));
    await syncLost;
    // A lease statement (one leasing the next slice ahead, or one a call waits for, which then fails).
    const leaseLost = proxy.arm(LEASE);
    while (m.stats.settled === 1) answers.push(await call(m, a));
    await leaseLost;
    answers.push(await call(m, a));
    await m.close();
    assert.equal(m.stats.settled, 2);
    await exact(a, credits, answers);
  });

  test('a group charge whose answer was lost while Postgres stayed out of reach: its calls answer 503 saying they may have been charged, and each charge is refunded once Postgres is back', async () => {
    const credits = 100 * COST;
    const a = await account(credits);
    const m = meter();
    const answers = [await call(m, a)];
    const lost = proxy.arm(GROUP, 'answer', { downForMs: SETTLE_WAIT_MS + 1_500 });
    const failures: unknown[] = [];
    const group = await Promise.all(
      Array.from({ length: 5 }, async (_, i) => {
        const id = `req_unknown_${seq++}_${i}`;
        const r = await m.reserve(a, COST);
        assert.ok(r.ok);
        return m.settle(r.reservationId, { requestId: id, keyId: null, endpoint: 'e' }).then(
          () => ({ id, charged: true }),
          (err: unknown) => (failures.push(err), { id, charged: false }),
        );
      }),
    );
    await lost;
    // The lost group's calls: answered 503 saying they may have been charged, kept to be refunded.
    const unknown = group.filter((g) => !g.charged);
    assert.ok(unknown.length >= 1, JSON.stringify(group));
    assert.equal(m.stats.lostAnswers.unknown, unknown.length);
    for (const err of failures) assert.deepEqual((err as AppError).details, { maybeCharged: true });
    assert.deepEqual(m.lostCharges.list().map((c) => c.requestId).sort(), unknown.map((u) => u.id).sort());
    // Their statement ran: they were charged.
    const charges = await ts.store.db.selectFrom('ledger_entries').select('request_id').where('account_id', '=', a).where('kind', '=', 'charge').execute();
    for (const u of unknown) assert.ok(charges.some((c) => c.request_id === u.id), `${u.id} charged before the refund`);
    // The refunder (serve.ts runs it in every API process) refunds them once Postgres answers.
    const logged: Array<{ msg: string; requestId?: string }> = [];
    const log = { info: (o: object, msg: string) => logged.push({ ...o, msg }), warn: (o: object, msg: string) => logged.push({ ...o, msg }) };
    const refunder = startRefunder(m.lostCharges, log, { everyMs: 200 });
    const deadline = Date.now() + 20_000;
    while (m.lostCharges.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await refunder.stop();
    assert.equal(m.lostCharges.size, 0);
    assert.deepEqual(m.stats.lostCharges, { refunded: unknown.length, notCharged: 0, pending: 0 });
    assert.deepEqual(logged.filter((l) => /^refunded the charge/.test(l.msg)).map((l) => l.requestId).sort(), unknown.map((u) => u.id).sort());
    assert.equal(logged.filter((l) => /not settled before this process stopped/.test(l.msg)).length, 0);
    const refunds = await ts.store.db.selectFrom('ledger_entries').select(['request_id', 'amount', 'endpoint']).where('account_id', '=', a).where('kind', '=', 'refund').execute();
    assert.deepEqual(refunds.map((r) => [r.request_id, Number(r.amount), r.endpoint]).sort(), unknown.map((u) => [u.id, COST, 'e']).sort());
    // Calls go on; the ledger holds exactly the calls answered as charged (a charge and its refund cancel).
    answers.push(...group, await call(m, a));
    assert.equal(answers.at(-1)!.charged, true, 'calls go on after');
    await m.close();
    const net = await ts.store.db.selectFrom('ledger_entries').select(['request_id', 'amount']).where('account_id', '=', a).where('kind', '!=', 'grant').execute();
    const paid = new Map<string, number>();
    for (const e of net) paid.set(e.request_id!, (paid.get(e.request_id!) ?? 0) - Number(e.amount));
    for (const x of answers) assert.equal(paid.get(x.id) ?? 0, x.charged ? COST : 0, `${x.id}: answered ${x.charged ? 'charged' : 'uncharged'}`);
    assert.deepEqual(await getBalance(ts.store.db, a), { balance: credits - COST * answers.filter((x) => x.charged).length, reserved: 0 });
    assert.equal(await ledgerSum(ts.store.db, a), credits - COST * answers.filter((x) => x.charged).length);
  });

  test('a process stopping with lost charges it could not settle logs each one with the command that refunds it', async () => {
    const logged: Array<{ msg: string; requestId?: string; accountId?: string }> = [];
    const log = { info: (o: object, msg: string) => logged.push({ ...o, msg }), warn: (o: object, msg: string) => logged.push({ ...o, msg }) };
    const never = { size: 1, list: () => [{ accountId: 'acc_x', requestId: 'req_x' }], pass: () => new Promise<never>(() => undefined) };
    // A pass is under way (its Postgres does not answer) when the process stops.
    const refunder = startRefunder(never, log, { everyMs: 20 });
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await refunder.stop();
    assert.ok(Date.now() - started < 5_000, 'a stop does not wait for Postgres for long');
    assert.deepEqual(logged.map((l) => [l.requestId, l.accountId]), [['req_x', 'acc_x']]);
    assert.match(logged[0]!.msg, /not settled before this process stopped/);
    assert.match(logged[0]!.msg, /`sdg credits refund acc_x req_x` refunds it if it was charged/);
  });
});
