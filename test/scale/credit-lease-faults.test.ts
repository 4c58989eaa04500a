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
      return { balance: 0, free: 0 };
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
