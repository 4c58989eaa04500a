// Postgres metering when Postgres fails in the middle of recovering from a swept lease: every call of
// the group is answered with the failure, none charged, and nothing is left to reject unhandled
// (which would end the process). The statements are replaced, so this needs no Postgres.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { PostgresMeterStore } from '../../src/credits/postgres-meter-store.js';
import type { LeaseRow } from '../../src/credits/lease-statements.js';
import { closeStubbed, stubStatements } from '../helpers/meter-stubs.js';
import { until } from '../helpers/processes.js';

test('a swept lease whose give-back fails: the group fails, uncharged, and no rejection goes unhandled', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown) => unhandled.push(err);
  process.on('unhandledRejection', onUnhandled);
  const meter = new PostgresMeterStore({} as Kysely<Database>, { leaseSeconds: 30 });
  const calls: string[] = [];
  stubStatements(meter, {
    async tryLease(): Promise<LeaseRow> {
      calls.push('tryLease');
      return { granted: 1, free: 0, waiting: 0, others: 0, expired: 0, epoch: 1 };
    },
    async chargeGroup() {
      calls.push('chargeGroup');
      // What Postgres answers when one of the group's leases was swept meanwhile.
      throw Object.assign(new Error('invalid input syntax for type integer: "credit lease gone"'), { code: '22P02' });
    },
    async dropLease() {
      calls.push('dropLease');
      throw new Error('Connection terminated unexpectedly');
    },
    async chargeFromBalance() {
      calls.push('chargeFromBalance');
      return { balance: 0, free: 0, total: 0 };
    },
  });
  try {
    const holds = await Promise.all([meter.reserve('acc_1', 5), meter.reserve('acc_1', 5)]);
    const settles = holds.map((h, i) => {
      assert.ok(h.ok);
      return meter.settle(h.reservationId, { requestId: `r${i}`, keyId: null, endpoint: 'e' });
    });
    const outcomes = await Promise.allSettled(settles);
    assert.deepEqual(
      outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'settled')),
      ['Connection terminated unexpectedly', 'Connection terminated unexpectedly'],
    );
    assert.ok(calls.includes('dropLease'));
    assert.ok(!calls.includes('chargeFromBalance'), 'nothing charged from the balance after the failure');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    await closeStubbed(meter);
  }
});

test('a lease granted by a statement that read an epoch older than the one this process knows is dropped and leased again', async () => {
  const meter = new PostgresMeterStore({} as Kysely<Database>, { leaseSeconds: 30 });
  const calls: string[] = [];
  const epochs = [5, 5, 7];
  stubStatements(meter, {
    async tryLease(): Promise<LeaseRow> {
      const epoch = epochs.shift()!;
      calls.push(`tryLease ${epoch}`);
      return { granted: 1, free: 0, waiting: 0, others: 0, expired: 0, epoch };
    },
    async dropLease() {
      calls.push('dropLease');
    },
  });
  try {
    assert.ok((await meter.reserve('acc_1', 5)).ok);
    // A renewal read a newer epoch: this process's leases were swept.
    meter['noteEpoch'](7);
    assert.equal(meter['leases'].size, 0);
    // The next lease's statement read the epoch before the sweep (it ran alongside): its grant cannot
    // be told from what the sweep gave back, so the row is dropped, and the next statement leases.
    const r = await meter.reserve('acc_1', 5);
    assert.ok(r.ok);
    assert.deepEqual(calls.slice(1), ['tryLease 5', 'dropLease', 'tryLease 7']);
    assert.equal(meter['epoch'], 7);
    const l = meter['leases'].get('acc_1')!;
    assert.equal(l.lost, false);
    assert.ok(l.leased >= 5 && l.held === 5, `leased ${l.leased}, held ${l.held}`);
  } finally {
    await closeStubbed(meter);
  }
});

/** A lease held, its first tick past; then one tick with 5 credits spent to fold in and a renewal due (`calls` cleared before it). */
async function tickWithSpending(meter: PostgresMeterStore, calls: string[]): Promise<void> {
  assert.ok((await meter.reserve('acc_1', 5)).ok);
  await until('the first tick', 5_000, () => meter['lastRenewAt'] > 0 && !meter['ticking']);
  calls.length = 0;
  meter['unsynced'].add('acc_1', 5);
  meter['lastRenewAt'] = 0;
  await meter['tick']();
}

test('a sync that fails does not stop the renewal after it in the same tick, and its spending goes in the next sync', async () => {
  const meter = new PostgresMeterStore({} as Kysely<Database>, { leaseSeconds: 30 });
  const calls: string[] = [];
  let failSync = true;
  stubStatements(meter, {
    async tryLease(): Promise<LeaseRow> {
      return { granted: 1, free: 0, waiting: 0, others: 0, expired: 0, epoch: 1 };
    },
    async sync(ids: string[], amounts: number[]) {
      calls.push(`sync ${ids.join(',')}=${amounts.join(',')}`);
      // Postgres refused it (a SQLSTATE): nothing was written. (A lost answer: the next test.)
      if (failSync) throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    },
    async renew() {
      calls.push('renew');
      return 1;
    },
  });
  try {
    await tickWithSpending(meter, calls);
    assert.deepEqual(calls, ['sync acc_1=5', 'renew']);
    failSync = false;
    meter['unsynced']['lastAt'] = 0;
    await meter['tick']();
    assert.deepEqual(calls.slice(2), ['sync acc_1=5']);
  } finally {
    await closeStubbed(meter);
  }
});

test('a sync whose answer is lost is not sent again: the next tick settles, giving every lease back from the ledger', async () => {
  const meter = new PostgresMeterStore({} as Kysely<Database>, { leaseSeconds: 30 });
  const calls: string[] = [];
  stubStatements(meter, {
    async tryLease(): Promise<LeaseRow> {
      return { granted: 1, free: 0, waiting: 0, others: 0, expired: 0, epoch: 1 };
    },
    async sync(ids: string[], amounts: number[]) {
      calls.push(`sync ${ids.join(',')}=${amounts.join(',')}`);
      // It may have committed: sent again with the same spending, it would count it twice.
      throw new Error('Connection terminated unexpectedly');
    },
    async settleOwn(group: unknown) {
      calls.push(`settleOwn ${group === undefined ? 'alone' : 'with a group'}`);
      return { epoch: 2, charged: new Map<string, number>() };
    },
    async renew() {
      calls.push('renew');
      return 2;
    },
  });
  try {
    await tickWithSpending(meter, calls);
    assert.deepEqual(calls, ['sync acc_1=5', 'renew']);
    meter['unsynced']['lastAt'] = 0;
    await meter['tick']();
    assert.equal(calls[2], 'settleOwn alone');
    assert.ok(!calls.slice(2).some((c) => c.startsWith('sync')), calls.join(' | '));
    assert.equal(meter.stats.settled, 1);
    assert.equal(meter.stats.now().accounts, 0, 'the leases were given back: their records go');
    assert.equal(meter['epoch'], 2);
  } finally {
    await closeStubbed(meter);
  }
});
