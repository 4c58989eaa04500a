// Postgres metering's group charges: when a group's statement ends, the next group's statement is
// sent before the ended group's calls are answered, so Postgres does not wait while this process
// writes answers. The statements are replaced (no Postgres needed): each group's statement ends when
// the test says so, and a log records, in order, statements sent and calls answered.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { PostgresMeterStore } from '../../src/credits/postgres-meter-store.js';
import type { GroupEntries, LeaseRow, LeaseStatements } from '../../src/credits/lease-statements.js';
import type { Charged, Reservation } from '../../src/credits/meter-store.js';
import { closeStubbed, stubStatements } from '../helpers/meter-stubs.js';

interface Statement {
  end(balance: number): void;
  fail(err: Error): void;
  ended: boolean;
}

function stubbedMeter(more: Partial<LeaseStatements> = {}) {
  const meter = new PostgresMeterStore({} as Kysely<Database>, { leaseSeconds: 30 });
  const log: string[] = [];
  const sent: Statement[] = [];
  stubStatements(meter, {
    async tryLease(): Promise<LeaseRow> {
      return { granted: 1, free: 0, waiting: 0, others: 0, expired: 0, epoch: 1 };
    },
    chargeGroup(ids: string[], _totals: number[], e: GroupEntries) {
      log.push(`statement ${e.requestIds.join(',')}`);
      return new Promise((resolve, reject) => {
        const st: Statement = {
          end: (balance) => {
            st.ended = true;
            resolve({ balances: ids.map((id) => ({ id, balance })), lastId: 0 });
          },
          fail: (err) => {
            st.ended = true;
            reject(err);
          },
          ended: false,
        };
        sent.push(st);
      });
    },
    ...more,
  });
  // Each call's outcome, logged when the meter answers it (not a promise's later turn).
  const settle = (hold: Reservation, requestId: string) =>
    new Promise<Charged | undefined>((resolve, reject) =>
      meter.settleTo(hold, { requestId, keyId: null, endpoint: 'e' }, {
        settled(r) {
          log.push(`answered ${requestId}${r ? ` balance ${r.balance}` : ''}`);
          resolve(r);
        },
        failed(err) {
          log.push(`failed ${requestId}`);
          reject(err as Error);
        },
      }),
    );
  const holds = async (n: number) => {
    const out: Reservation[] = [];
    for (let i = 0; i < n; i++) {
      const r = await meter.reserve('acc_1', 10);
      assert.ok(r.ok);
      out.push(r.reservationId);
    }
    return out;
  };
  const until = async (what: () => boolean) => {
    for (let i = 0; i < 100 && !what(); i++) await new Promise((r) => setImmediate(r));
    assert.ok(what(), 'timed out');
  };
  // Ends what a failed assertion left running (close waits for it), then closes.
  const done = async () => {
    for (let i = 0; i < 10; i++) {
      for (const st of sent) if (!st.ended) st.end(0);
      await new Promise((r) => setImmediate(r));
    }
    await closeStubbed(meter);
  };
  return { meter, log, sent, settle, holds, until, done };
}

test('the next group is sent before the calls of the group that ended are answered', async () => {
  const m = stubbedMeter();
  try {
    const [h0, h1, h2, h3] = await m.holds(4);
    const first = [m.settle(h0!, 'r0'), m.settle(h1!, 'r1')];
    await m.until(() => m.sent.length === 1);
    // Settled while the first group's statement runs: they wait for the next group.
    const second = [m.settle(h2!, 'r2'), m.settle(h3!, 'r3')];
    await new Promise((r) => setImmediate(r));
    assert.equal(m.sent.length, 1, 'one group statement at a time');
    m.sent[0]!.end(980);
    assert.deepEqual(
      (await Promise.all(first)).map((r) => r?.balance),
      [990, 980],
    );
    assert.deepEqual(m.log, ['statement r0,r1', 'statement r2,r3', 'answered r0 balance 990', 'answered r1 balance 980']);
    m.sent[1]!.end(960);
    assert.deepEqual(
      (await Promise.all(second)).map((r) => r?.balance),
      [970, 960],
    );
  } finally {
    await m.done();
  }
});

test('a group whose statement fails answers its calls with the failure, and the next group still goes', async () => {
  const m = stubbedMeter();
  try {
    const [h0, h1] = await m.holds(2);
    const first = m.settle(h0!, 'r0');
    await m.until(() => m.sent.length === 1);
    const second = m.settle(h1!, 'r1');
    // Refused by Postgres (a SQLSTATE): nothing was written. (A lost answer: the next test.)
    m.sent[0]!.fail(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }));
    await assert.rejects(first, /statement timeout/);
    await m.until(() => m.sent.length === 2);
    m.sent[1]!.end(990);
    assert.equal((await second)?.balance, 990);
    assert.deepEqual(m.log, ['statement r0', 'failed r0', 'statement r1', 'answered r1 balance 990']);
  } finally {
    await m.done();
  }
});

test('a group whose answer is lost is settled before any other goes: its calls answered as the ledger says', async () => {
  const settled: Array<{ accountIds: string[]; createdAt: string } | undefined> = [];
  const m = stubbedMeter({
    async settleOwn(group) {
      settled.push(group);
      // What the ledger says: r0's entry committed, r1's did not (the proxy lost the answer of a
      // group that committed in test/scale/lost-answers.test.ts; this is the meter's side alone).
      return { epoch: 2, charged: new Map([['r0', 990]]) };
    },
    async chargeFromBalance() {
      return { balance: 970, free: 0, total: 970 };
    },
  });
  try {
    const [h0, h1, h2] = await m.holds(3);
    const first = [m.settle(h0!, 'r0'), m.settle(h1!, 'r1')];
    await m.until(() => m.sent.length === 1);
    const second = m.settle(h2!, 'r2');
    m.sent[0]!.fail(new Error('Connection terminated unexpectedly'));
    assert.equal((await first[0])?.balance, 990, 'charged: answered as such');
    await assert.rejects(first[1]!, /Connection terminated/);
    // The settlement gave every lease back: r2 is charged from the balance, not in a group.
    assert.equal((await second)?.balance, 970);
    assert.equal(m.sent.length, 1);
    assert.equal(settled.length, 1);
    assert.deepEqual(settled[0]?.accountIds, ['acc_1']);
    assert.match(settled[0]!.createdAt, /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual(m.meter.stats.lostAnswers, { charged: 1, notCharged: 1, unknown: 0 });
    assert.equal(m.meter.stats.directCharges, 1);
  } finally {
    await m.done();
  }
});
