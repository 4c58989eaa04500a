// An operator's correction: `sdg credits deduct` takes credits back with a ledger entry (kind grant,
// negative amount), never below what the account has free, exact under concurrent charges; on
// Postgres, credits an API process leases for no call are given back to it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deduct, getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { PostgresMeterStore } from '../../src/credits/postgres-meter-store.js';
import type { AppError } from '../../src/errors/app-error.js';
import { backends } from '../helpers/backends.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { runSdg, until } from '../helpers/processes.js';

const COST = 10;

for (const backend of backends()) {
  describe(`operator deductions (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend, { COSTS: JSON.stringify({ echoHello: COST }) });
    });
    after(() => h.close());
    const balanceOf = async (accountId: string) => (await getBalance(h.deps.store.db, accountId))!.balance;
    const echo = (apiKey: string) => h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': apiKey } });

    test('sdg credits deduct: the balance goes down with a ledger entry the account sees; more than it has, or bad input, changes nothing', async () => {
      const a = await h.account({ credits: 1_000 });
      const env = h.testStore.env;
      const d = await runSdg(['credits', 'deduct', a.accountId, '300', '--note', 'the grant of 2026-12-01 was made twice', '--json'], env);
      assert.equal(d.code, 0, d.stderr);
      assert.deepEqual(JSON.parse(d.stdout), { accountId: a.accountId, balance: 700 });
      const usage = await h.app.inject({ url: '/api/v1/usage?limit=1', headers: { 'x-api-key': a.apiKey } });
      assert.equal(usage.statusCode, 200);
      const [entry] = (usage.json() as { items: Array<Record<string, unknown>> }).items;
      assert.deepEqual({ kind: entry!.kind, amount: entry!.amount, balanceAfter: entry!.balanceAfter, note: entry!.note }, { kind: 'grant', amount: -300, balanceAfter: 700, note: 'the grant of 2026-12-01 was made twice' });

      // Refused, not a usage error: exit 3, and under --json the figures for a script.
      const over = await runSdg(['credits', 'deduct', a.accountId, '701'], env);
      assert.equal(over.code, 3, over.stderr);
      assert.match(over.stderr, /^sdg: Only 700 credits can be deducted from acc_\S+ now; nothing was deducted\./);
      const overJson = await runSdg(['credits', 'deduct', a.accountId, '701', '--json'], env);
      assert.equal(overJson.code, 3);
      assert.deepEqual(JSON.parse(overJson.stderr), { error: { code: 'insufficient_credits', message: `Only 700 credits can be deducted from ${a.accountId} now; nothing was deducted.`, details: { available: 700, leased: 0 } }, exitCode: 3 });
      for (const args of [['0'], ['-5'], ['x'], ['5', '--note', ' ']]) {
        const bad = await runSdg(['credits', 'deduct', a.accountId, ...args], env);
        assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
      }
      const unknown = await runSdg(['credits', 'deduct', 'acc_nope', '5'], env);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /No account acc_nope/);

      const all = await runSdg(['credits', 'deduct', a.accountId, '700'], env);
      assert.equal(all.code, 0, all.stderr);
      assert.equal(all.stdout, `${a.accountId} balance: 0\n`);
      assert.equal((await echo(a.apiKey)).statusCode, 402, 'nothing left to call with');
      assert.equal(await balanceOf(a.accountId), 0);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 0);
    });

    test('deductions among concurrent charged calls: never below zero, every credit accounted for, the ledger equals the balance', async () => {
      const a = await h.account({ credits: 1_000 });
      const [calls, deductions] = await Promise.all([
        Promise.all(Array.from({ length: 60 }, () => echo(a.apiKey))),
        Promise.all(Array.from({ length: 6 }, () => deduct(h.deps.store, a.accountId, 100, 'correction'))),
      ]);
      const ok = calls.filter((r) => r.statusCode === 200).length;
      assert.equal(calls.filter((r) => r.statusCode !== 200 && r.statusCode !== 402).length, 0, 'every call answered 200 or 402');
      const deducted = deductions.filter((r) => 'balance' in r).length;
      const balance = await balanceOf(a.accountId);
      assert.ok(balance >= 0);
      assert.equal(balance, 1_000 - ok * COST - deducted * 100, `${ok} calls and ${deducted} deductions`);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), balance);
      const entries = await h.deps.store.db.selectFrom('ledger_entries').select(['kind', 'amount']).where('account_id', '=', a.accountId).execute();
      assert.equal(entries.filter((e) => e.kind === 'charge').length, ok);
      assert.equal(entries.filter((e) => e.kind === 'grant' && Number(e.amount) === -100).length, deducted);
      // Whatever was refused saw less than it asked for.
      for (const r of deductions) if (!('balance' in r)) assert.ok(r.available < 100);
    });

    if (backend === 'sqlite') {
      test("a call in flight whose charge no longer fits after a deduction is refused at its charge (402), not charged below zero", async () => {
        const a = await h.account({ credits: 100 });
        // The API process's hold is unseen by the command line's process.
        const held = h.deps.meter.tryReserveSync!(a.accountId, 100);
        assert.ok(held?.ok);
        assert.deepEqual(await deduct(h.deps.store, a.accountId, 50, 'correction'), { balance: 50 });
        await assert.rejects(h.deps.meter.settle(held.reservationId, { requestId: 'req_after_deduct', keyId: null, endpoint: 'echoHello' }), (e: AppError) => e.code === 'insufficient_credits');
        assert.equal(await balanceOf(a.accountId), 50);
        assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 50);
      });
    }

    if (backend === 'postgres') {
      test('credits an API process leases for no call are given back to a deduction, which then takes them', async () => {
        const a = await h.account({ credits: 1_000 });
        assert.equal((await echo(a.apiKey)).statusCode, 200);
        const { reserved } = (await getBalance(h.deps.store.db, a.accountId))!;
        assert.ok(reserved > 0, 'the API process keeps a lease for the next calls');
        // All that is left: only possible once the lease is given back.
        assert.deepEqual(await deduct(h.deps.store, a.accountId, 990, 'correction'), { balance: 0 });
        assert.equal((await echo(a.apiKey)).statusCode, 402);
        assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 0);
        await until('no credits leased', 5_000, async () => (await getBalance(h.deps.store.db, a.accountId))!.reserved === 0);
      });

      test('the leases of an API process that stopped (killed) are swept back for the deduction, not reported as held', async () => {
        const a = await h.account({ credits: 1_000 });
        const dead = new PostgresMeterStore(h.deps.store.db, { leaseSeconds: 30 });
        const held = await dead.reserve(a.accountId, COST);
        assert.ok(held.ok);
        assert.ok(await dead.settle(held.reservationId, { requestId: 'req_before_kill', keyId: null, endpoint: 'echoHello' }));
        // Killed: it renews nothing and gives nothing back; its lease outlives it.
        clearInterval((dead as unknown as { timer?: NodeJS.Timeout }).timer);
        await h.deps.store.db.updateTable('credit_lease_owners').set({ expires_at: new Date(Date.now() - 60_000) }).where('owner', '=', dead.owner).execute();
        assert.ok((await getBalance(h.deps.store.db, a.accountId))!.reserved > 0, 'a lease left behind');
        assert.deepEqual(await deduct(h.deps.store, a.accountId, 1_000 - COST, 'correction'), { balance: 0 });
        assert.deepEqual(await getBalance(h.deps.store.db, a.accountId), { balance: 0, reserved: 0 });
        assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 0);
      });

      test('credits held by a call in flight are not deducted: the deduction says what it could take, and takes nothing', async () => {
        const a = await h.account({ credits: 100 });
        const held = await h.deps.meter.reserve(a.accountId, 60);
        assert.ok(held.ok);
        const r = await deduct(h.deps.store, a.accountId, 50, 'correction');
        assert.ok(!('balance' in r), 'refused');
        assert.deepEqual(r, { available: 40, leased: 60, waited: true });
        assert.ok(await h.deps.meter.settle(held.reservationId, { requestId: 'req_held', keyId: null, endpoint: 'echoHello' }));
        assert.equal(await balanceOf(a.accountId), 40);
        assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 40);
      });
    }
  });
}
