// Refunds of a call's charge by its request id (refunds.ts): what an API process does for the calls
// it answered 503 with details.maybeCharged once Postgres answers again (end to end, with the
// answer really lost, in test/scale/lost-answers.test.ts), and `sdg credits refund` for the calls a
// process stopped before settling. Once per call, under concurrency too; the ledger equals the balance.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { LostCharges, refundCharge } from '../../src/credits/refunds.js';
import { backends } from '../helpers/backends.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { runSdg } from '../helpers/processes.js';

const COST = 10;

for (const backend of backends()) {
  describe(`refunds of charges (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend, { COSTS: JSON.stringify({ echoHello: COST }) });
    });
    after(() => h.close());
    const balanceOf = async (accountId: string) => (await getBalance(h.deps.store.db, accountId))!.balance;
    /** A charged call: its request id. */
    const call = async (apiKey: string): Promise<string> => {
      const r = await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': apiKey } });
      assert.equal(r.statusCode, 200);
      return r.headers['x-request-id'] as string;
    };

    test('sdg credits refund: the charge comes back once, as a refund entry the account sees under the request id; a call not charged, or bad input, changes nothing', async () => {
      const a = await h.account({ credits: 100 });
      const [first, second] = [await call(a.apiKey), await call(a.apiKey)];
      assert.equal(await balanceOf(a.accountId), 80);
      const env = h.testStore.env;
      const r = await runSdg(['credits', 'refund', a.accountId, first, '--json'], env);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { accountId: a.accountId, requestId: first, outcome: 'refunded', amount: COST, balance: 90 });
      const usage = await h.app.inject({ url: '/api/v1/usage?limit=1', headers: { 'x-api-key': a.apiKey } });
      assert.equal(usage.statusCode, 200);
      const [entry] = (usage.json() as { items: Array<Record<string, unknown>> }).items;
      assert.deepEqual(
        { kind: entry!.kind, amount: entry!.amount, balanceAfter: entry!.balanceAfter, requestId: entry!.requestId, endpoint: entry!.endpoint, keyId: entry!.keyId, note: entry!.note },
        { kind: 'refund', amount: COST, balanceAfter: 90, requestId: first, endpoint: 'echoHello', keyId: a.keyId, note: 'refunded by operator' },
      );
      // ?endpoint= keeps the refund with the operation's charges.
      const byEndpoint = await h.app.inject({ url: '/api/v1/usage?endpoint=echoHello', headers: { 'x-api-key': a.apiKey } });
      assert.deepEqual((byEndpoint.json() as { items: Array<{ kind: string }> }).items.map((i) => i.kind), ['refund', 'charge', 'charge']);

      const again = await runSdg(['credits', 'refund', a.accountId, first], env);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /is refunded already; nothing done/);
      const none = await runSdg(['credits', 'refund', a.accountId, 'req_never_made'], env);
      assert.equal(none.code, 0, none.stderr);
      assert.match(none.stdout, /no charge for req_never_made; nothing done/);
      // Another account's call is not this account's to refund.
      const b = await h.account({ credits: 100 });
      const other = await runSdg(['credits', 'refund', b.accountId, second, '--json'], env);
      assert.equal(JSON.parse(other.stdout).outcome, 'not_charged');
      const unknown = await runSdg(['credits', 'refund', 'acc_nope', second], env);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /No account acc_nope/);
      const blank = await runSdg(['credits', 'refund', a.accountId, ' '], env);
      assert.equal(blank.code, 2);

      assert.equal(await balanceOf(a.accountId), 90);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 90);
      assert.equal(await balanceOf(b.accountId), 100);
      // The usage summary counts the calls charged less the one refunded.
      const from = new Date(Date.now() - 3_600_000).toISOString();
      const to = new Date(Date.now() + 3_600_000).toISOString();
      const summary = await h.app.inject({ url: `/api/v1/usage/summary?from=${from}&to=${to}&granularity=day`, headers: { 'x-api-key': a.apiKey } });
      assert.equal(summary.statusCode, 200, summary.body);
      const d = (summary.json() as { data: { calls: number; credits: number; endpoints: unknown[] } }).data;
      assert.deepEqual({ calls: d.calls, credits: d.credits, endpoints: d.endpoints }, { calls: 1, credits: COST, endpoints: [{ endpoint: 'echoHello', calls: 1, credits: COST }] });
    });

    test('the usage summary takes a refunded charge out of its own bucket, however much later the refund: never a negative count', async () => {
      const a = await h.account({ credits: 100 });
      const day = 86_400_000;
      const chargedAt = new Date(Date.now() - 2 * day).toISOString();
      // A charge two days ago (as a call answered 503 then, refunded only now by the operator).
      await h.deps.store.db.updateTable('accounts').set({ balance: 100 - COST }).where('id', '=', a.accountId).execute();
      await h.deps.store.db.insertInto('ledger_entries').values({ account_id: a.accountId, kind: 'charge', amount: -COST, balance_after: 100 - COST, request_id: 'req_two_days_ago', key_id: a.keyId, endpoint: 'echoHello', note: null, created_at: chargedAt }).execute();
      await call(a.apiKey);
      assert.equal((await refundCharge(h.deps.store.db, { accountId: a.accountId, requestId: 'req_two_days_ago' }, 't')).outcome, 'refunded');
      const summary = async (fromMs: number, toMs: number) => {
        const r = await h.app.inject({ url: `/api/v1/usage/summary?from=${new Date(fromMs).toISOString()}&to=${new Date(toMs).toISOString()}&granularity=day`, headers: { 'x-api-key': a.apiKey } });
        assert.equal(r.statusCode, 200, r.body);
        const d = (r.json() as { data: { calls: number; credits: number; endpoints: unknown[]; buckets: Array<{ calls: number; credits: number }> } }).data;
        assert.ok(d.buckets.every((b) => b.calls >= 0 && b.credits >= 0), JSON.stringify(d.buckets));
        return { calls: d.calls, credits: d.credits, endpoints: d.endpoints };
      };
      const now = Date.now();
      assert.deepEqual(await summary(now - 3 * day, now - day), { calls: 0, credits: 0, endpoints: [] }, 'the refunded charge is out of its own window');
      assert.deepEqual(await summary(now - day, now + 3_600_000), { calls: 1, credits: COST, endpoints: [{ endpoint: 'echoHello', calls: 1, credits: COST }] }, 'the refund does not count against the call made today');
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), await balanceOf(a.accountId));
    });

    test('refunds of one call sent at once, among charged calls: refunded once, the ledger equals the balance', async () => {
      const a = await h.account({ credits: 1_000 });
      const id = await call(a.apiKey);
      const created = await h.deps.store.db.selectFrom('ledger_entries').select('created_at').where('request_id', '=', id).executeTakeFirstOrThrow();
      const [outcomes, calls] = await Promise.all([
        Promise.all(Array.from({ length: 8 }, (_, i) => refundCharge(h.deps.store.db, { accountId: a.accountId, requestId: id, ...(i % 2 ? { chargedAt: created.created_at } : {}) }, 't'))),
        Promise.all(Array.from({ length: 20 }, () => call(a.apiKey))),
      ]);
      assert.deepEqual(outcomes.map((o) => o.outcome).sort(), ['already_refunded', 'already_refunded', 'already_refunded', 'already_refunded', 'already_refunded', 'already_refunded', 'already_refunded', 'refunded']);
      assert.equal(calls.length, 20);
      assert.equal(await balanceOf(a.accountId), 1_000 - 20 * COST);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 1_000 - 20 * COST);
    });

    test("a process's lost charges: each charged one refunded, each other forgotten, counted; a failure leaves them for the next pass", async () => {
      const a = await h.account({ credits: 100 });
      const id = await call(a.apiKey);
      const counts = { refunded: 0, notCharged: 0, pending: 0 };
      const lost = new LostCharges(h.deps.store.db, counts);
      lost.add({ accountId: a.accountId, requestId: id });
      lost.add({ accountId: a.accountId, requestId: 'req_lost_before_postgres' });
      assert.equal(counts.pending, 2);
      const failing = new LostCharges({ transaction: () => ({ execute: () => Promise.reject(new Error('Connection terminated unexpectedly')) }) } as never);
      failing.add({ accountId: a.accountId, requestId: id });
      failing.add({ accountId: a.accountId, requestId: 'x' });
      const failed = await failing.pass();
      assert.deepEqual(failed.map((d) => d.outcome), ['failed'], 'stops at the first failure');
      assert.equal(failing.size, 2);
      assert.deepEqual(failing.list().map((c) => c.requestId), ['x', id], 'the failed one goes to the back: one failing for a reason of its own does not hold up the rest');
      // Nothing is tried while this process's lost statements are not settled.
      let settleAsked = 0;
      const unsettled = new LostCharges(h.deps.store.db, undefined, async () => (settleAsked++, false));
      unsettled.add({ accountId: a.accountId, requestId: id });
      assert.deepEqual(await unsettled.pass(), []);
      assert.equal(settleAsked, 1);
      assert.equal(unsettled.size, 1);
      const done = await lost.pass();
      assert.deepEqual(done.map((d) => [d.charge.requestId, d.outcome]), [[id, 'refunded'], ['req_lost_before_postgres', 'not_charged']]);
      assert.deepEqual(counts, { refunded: 1, notCharged: 1, pending: 0 });
      assert.equal(await balanceOf(a.accountId), 100);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 100);
    });
  });
}
