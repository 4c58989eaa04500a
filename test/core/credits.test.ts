// Credits are money: exactness under concurrency, on every backend and across processes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getBalance, grant, ledgerSum } from '../../src/credits/credits-repo.js';
import { createAccount } from '../../src/accounts/accounts-repo.js';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';
import { errorOf, startHarness, type Harness } from '../helpers/harness.js';
import { runSdg, startServer, type ServerProcess } from '../helpers/processes.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { SqliteMeterStore } from '../../src/credits/sqlite-meter-store.js';
import type { AppError } from '../../src/errors/app-error.js';

const COST = 7;
const N = 10;
const costs = JSON.stringify({ echoHello: COST });

for (const backend of backends()) {
  describe(`credits (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend, { COSTS: costs });
    });
    after(() => h.close());

    test(`${20 * N} concurrent calls with credits for exactly ${N}: ${N} succeed, the rest 402, balance 0, ledger sums`, async () => {
      const a = await h.account({ credits: COST * N });
      const results = await Promise.all(
        Array.from({ length: 20 * N }, () => h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': a.apiKey } })),
      );
      const ok = results.filter((r) => r.statusCode === 200);
      const refused = results.filter((r) => r.statusCode === 402);
      assert.equal(ok.length, N);
      assert.equal(refused.length, 19 * N);
      for (const r of ok) assert.equal(r.headers['x-credits-charged'], String(COST));
      for (const r of refused) {
        const e = errorOf(r);
        assert.equal(e.code, 'insufficient_credits');
        assert.equal(e.details?.required, COST);
        assert.equal(r.headers['x-credits-charged'], '0');
      }
      const bal = await getBalance(h.deps.store.db, a.accountId);
      assert.deepEqual(bal, { balance: 0, reserved: 0 });
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 0);
      const charges = await h.deps.store.db.selectFrom('ledger_entries').selectAll().where('account_id', '=', a.accountId).where('kind', '=', 'charge').execute();
      assert.equal(charges.length, N);
      assert.equal(new Set(charges.map((c) => c.request_id)).size, N, 'every charge recorded once, with its request id');
      assert.deepEqual(new Set(charges.map((c) => c.request_id)), new Set(ok.map((r) => r.headers['x-request-id'])));
    });

    test('bad input to a charged route is refused before any credit is held, and costs nothing', async () => {
      const a = await h.account({ credits: 1000 });
      const ledgerRows = async () => (await h.deps.store.db.selectFrom('ledger_entries').select('id').where('account_id', '=', a.accountId).execute()).length;
      const before = await ledgerRows();
      for (const url of ['/social/v1/users/not-a-number/tweets', '/social/v1/users/1/tweets?limit=0', '/social/v1/tweets/%20', '/api/v1/usage?limit=0']) {
        const res = await h.app.inject({ url, headers: { 'x-api-key': a.apiKey } });
        assert.equal(res.statusCode, 400, url);
        assert.equal(res.headers['x-credits-charged'], '0', url);
        assert.equal(res.headers['x-credits-remaining'], '1000', url);
      }
      assert.deepEqual(await getBalance(h.deps.store.db, a.accountId), { balance: 1000, reserved: 0 });
      assert.equal(await ledgerRows(), before);
    });

    test('a number in a query string is decimal digits: hex, exponents, signs, spaces and fractions are a 400, uncharged', async () => {
      const a = await h.account({ credits: 1000 });
      // JavaScript reads each of these as a number (Ajv coerced them so: 0x10 was a page of 16, charged).
      for (const limit of ['0x10', '1e1', '0b11', '0o7', '+2', '%201', '2%20', '2.0', '%09%0A3', 'Infinity']) {
        const res = await h.app.inject({ url: `/social/v1/users/1300000000266068/tweets?limit=${limit}`, headers: { 'x-api-key': a.apiKey } });
        assert.equal(res.statusCode, 400, limit);
        assert.equal(errorOf(res).message, 'querystring.limit must be integer.', limit);
        assert.equal(res.headers['x-credits-charged'], '0', limit);
      }
      // Each offending field is named, not only the first (contract, section 3).
      const several = await h.app.inject({ url: '/social/v1/users/1300000000266068/tweets?limit=0x10&sinceId=x&foo=1', headers: { 'x-api-key': a.apiKey } });
      assert.equal(several.statusCode, 400);
      const fields = (errorOf(several).details as { fields: Array<{ field: string; message: string }> }).fields;
      assert.deepEqual(fields.map((f) => f.field).sort(), ['querystring.foo', 'querystring.limit', 'querystring.sinceId']);
      assert.equal(fields.find((f) => f.field === 'querystring.limit')!.message, 'must be integer');
      // Decimal digits, leading zeros included, are a number as before.
      const ok = await h.app.inject({ url: '/api/v1/usage?limit=007', headers: { 'x-api-key': a.apiKey } });
      assert.equal(ok.statusCode, 200);
      assert.deepEqual(await getBalance(h.deps.store.db, a.accountId), { balance: 1000, reserved: 0 });
    });

    // 127 charges settled in one turn: on SQLite one job of the group commit, its ledger rows cut
    // into multi-row INSERTs of 64, 32, 16, 8, 4, 2 and 1 (every size once), over two accounts.
    test('127 charges settled at once over two accounts: each its own entry, in order, with its balance after', async () => {
      const db = h.deps.store.db;
      const accounts = [await h.account({ credits: 1000 }), await h.account({ credits: 1000 })];
      const calls = Array.from({ length: 127 }, (_, i) => ({ account: accounts[i % 2]!, amount: (i % 3) + 1, requestId: `req_group_${i}` }));
      const holds: Parameters<typeof h.deps.meter.settle>[0][] = [];
      for (const c of calls) {
        const r = await h.deps.meter.reserve(c.account.accountId, c.amount);
        assert.ok(r.ok);
        holds.push(r.reservationId);
      }
      const settled = await Promise.all(calls.map((c, i) => h.deps.meter.settle(holds[i]!, { requestId: c.requestId, keyId: c.account.keyId, endpoint: `op_${i % 5}` })));
      for (const a of accounts) {
        const mine = calls.map((c, i) => ({ ...c, i })).filter((c) => c.account === a);
        const entries = await db.selectFrom('ledger_entries').selectAll().where('account_id', '=', a.accountId).where('kind', '=', 'charge').orderBy('id').execute();
        assert.deepEqual(
          entries.map((e) => [e.request_id, e.amount, e.key_id, e.endpoint]),
          mine.map((c) => [c.requestId, -c.amount, a.keyId, `op_${c.i % 5}`]),
        );
        let balance = 1000;
        entries.forEach((e, n) => {
          balance -= mine[n]!.amount;
          assert.equal(e.balance_after, balance, `${e.request_id}'s balance after`);
          assert.deepEqual(settled[mine[n]!.i], { charged: mine[n]!.amount, balance });
          assert.ok(!Number.isNaN(Date.parse(e.created_at)), e.created_at);
        });
        if (backend === 'sqlite') assert.equal(new Set(entries.map((e) => e.created_at)).size, 1, 'one group, one time');
        // (Postgres: `reserved` holds what this process leased and has not spent.)
        assert.equal((await getBalance(db, a.accountId))?.balance, balance);
        assert.equal(await ledgerSum(db, a.accountId), balance);
      }
    });

    test('a release never exceeds its reservation; settle and release happen once', async () => {
      const db = h.deps.store.db;
      const m = h.deps.meter;
      const reserve = m.reserve.bind(m);
      const release = m.release.bind(m);
      const settle = m.settle.bind(m);
      const { accountId } = await createAccount(db, { name: 'r', planId: 'free' });
      await grant(db, accountId, 50, 't');
      const r1 = await reserve(accountId, 30);
      assert.ok(r1.ok);
      const r2 = await reserve(accountId, 30);
      assert.deepEqual(r2, { ok: false, available: 20 });
      assert.equal(await release(r1.reservationId), true);
      assert.equal(await release(r1.reservationId), false);
      assert.equal(await settle(r1.reservationId, { requestId: 'x', keyId: null, endpoint: 'e' }), undefined);
      // Postgres: what the process leased and no call holds goes back (here at once).
      await m.close?.();
      assert.deepEqual(await getBalance(db, accountId), { balance: 50, reserved: 0 });
      const r3 = await reserve(accountId, 50);
      assert.ok(r3.ok);
      assert.deepEqual(await settle(r3.reservationId, { requestId: 'y', keyId: null, endpoint: 'e' }), { charged: 50, balance: 0 });
      assert.equal(await release(r3.reservationId), false);
      assert.deepEqual(await getBalance(db, accountId), { balance: 0, reserved: 0 });
      assert.equal(await ledgerSum(db, accountId), 0);
      await assert.rejects(async () => reserve(accountId, 0));
      await assert.rejects(async () => reserve(accountId, -5));
    });
  });

  if (backend === 'sqlite') {
    describe('credits: holds kept in the process (sqlite)', () => {
      let h: Harness;
      before(async () => {
        h = await startHarness(backend, { COSTS: costs });
      });
      after(() => h.close());

      test('a hold writes nothing; only the charge does, and a dead process leaves no hold behind', async () => {
        const db = h.deps.store.db;
        const { accountId } = await createAccount(db, { name: 'ip', planId: 'free' });
        await grant(db, accountId, 20, 't');
        const r = await h.deps.meter.reserve(accountId, 15);
        assert.ok(r.ok);
        assert.deepEqual(await getBalance(db, accountId), { balance: 20, reserved: 0 });
        // This process counts its own hold: 5 left, not 20.
        assert.deepEqual(await h.deps.meter.reserve(accountId, 10), { ok: false, available: 5 });
        // Another process on the same file (its own holds, none) starts from the stored balance.
        const other = new SqliteMeterStore(h.deps.store.sqlite!, h.deps.store.grouped!);
        const o = await other.reserve(accountId, 10);
        assert.ok(o.ok);
        assert.deepEqual(await other.settle(o.reservationId, { requestId: 'o', keyId: null, endpoint: 'e' }), { charged: 10, balance: 10 });
        // Our settle re-checks inside the write: the other process spent the credits meanwhile.
        await assert.rejects(h.deps.meter.settle(r.reservationId, { requestId: 'r', keyId: null, endpoint: 'e' }), (e: AppError) => e.code === 'insufficient_credits');
        assert.deepEqual(await getBalance(db, accountId), { balance: 10, reserved: 0 });
        assert.equal(await ledgerSum(db, accountId), 10);
        // The refused hold is gone: the 10 left can be held again.
        assert.ok((await h.deps.meter.reserve(accountId, 10)).ok);
      });
    });
  }

  // Postgres only: an embedded store serves the API from one process (api-role-lock.ts, tested in
  // api-role-lock.test.ts).
  if (backend === 'postgres') describe(`credits across two server processes (${backend})`, () => {
    let ts: TestStore;
    const servers: ServerProcess[] = [];
    before(async () => {
      ts = await createTestStore(backend);
      await migrateToLatest(ts.store);
      await ts.store.close();
      const env = { ...ts.env, COSTS: costs, ROLES: 'api' };
      servers.push(await startServer(env), await startServer(env));
    });
    after(async () => {
      for (const s of servers) await s.stop();
      await ts.dispose();
    });

    test(`${20 * N} concurrent calls spread over two processes: exactly ${N} succeed`, async () => {
      const created = await runSdg(['accounts', 'create', '--name', 'mp', '--credits', String(COST * N), '--rate-limit-per-minute', '100000', '--json'], { ...ts.env });
      assert.equal(created.code, 0, created.stderr);
      const { accountId, apiKey } = JSON.parse(created.stdout) as { accountId: string; apiKey: string };
      const statuses = await Promise.all(
        Array.from({ length: 20 * N }, (_, i) => fetch(`${servers[i % 2]!.url}/echo/v1/hello`, { headers: { 'x-api-key': apiKey } }).then((r) => r.status)),
      );
      assert.equal(statuses.filter((s) => s === 200).length, N);
      assert.equal(statuses.filter((s) => s === 402).length, 19 * N);
      const bal = await fetch(`${servers[0]!.url}/api/v1/credits/balance`, { headers: { 'x-api-key': apiKey } }).then((r) => r.json() as Promise<{ data: { balance: number } }>);
      assert.equal(bal.data.balance, 0);
      const usage = await fetch(`${servers[1]!.url}/api/v1/usage?limit=100`, { headers: { 'x-api-key': apiKey } }).then(
        (r) => r.json() as Promise<{ items: Array<{ kind: string; amount: number; balanceAfter: number }> }>,
      );
      assert.equal(usage.items.filter((i) => i.kind === 'charge').length, N);
      assert.equal(usage.items.reduce((s, i) => s + i.amount, 0), 0);
      // balanceAfter values of the charges are distinct steps down to 0: each charge applied exactly once
      const afters = usage.items.filter((i) => i.kind === 'charge').map((i) => i.balanceAfter).sort((x, y) => x - y);
      assert.deepEqual(afters, Array.from({ length: N }, (_, i) => i * COST));
      assert.ok(accountId.startsWith('acc_'));
    });
  });
}
