// A Postgres charge group's parameters (src/credits/group-columns.ts): each entry's `later` is what
// its account is charged after it in the group (its balance after = the account's final balance plus
// that), and each account's total is what the group debits it, in account id order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { groupColumns } from '../../src/credits/group-columns.js';
import type { AccountLease, PendingCharge } from '../../src/credits/lease-state.js';

const lease = (accountId: string) => ({ accountId }) as AccountLease;
const charge = (l: AccountLease, amount: number, i: number): PendingCharge => ({
  hold: { lease: l, amount, open: false },
  info: { requestId: `req_${i}`, keyId: i % 3 === 0 ? null : `key_${i}`, endpoint: `GET /e${i}` },
  to: { settled: () => undefined, failed: () => undefined },
});

test('runs of one account, accounts interleaved, and one account on two lease objects: offsets, totals and columns', () => {
  const [b, a, c] = [lease('acc_b'), lease('acc_a'), lease('acc_c')];
  const a2 = lease('acc_a'); // the account leased anew after its first lease object was lost
  const spec: Array<[AccountLease, number]> = [[b, 5], [b, 7], [a, 100], [c, 1], [b, 3], [a2, 10], [a, 20], [c, 2]];
  const batch = spec.map(([l, amount], i) => charge(l, amount, i));
  const { entries, ids, totals } = groupColumns(batch);
  // Reference: by the definition, one charge at a time.
  const later = batch.map((x, i) => batch.slice(i + 1).filter((y) => y.hold.lease.accountId === x.hold.lease.accountId).reduce((s, y) => s + y.hold.amount, 0));
  assert.deepEqual(entries.later, later);
  assert.deepEqual(entries.later, [10, 3, 30, 2, 0, 20, 0, 0]);
  assert.deepEqual(ids, ['acc_a', 'acc_b', 'acc_c']);
  assert.deepEqual(totals, [130, 15, 3]);
  assert.deepEqual(entries.accountIds, spec.map(([l]) => l.accountId));
  assert.deepEqual(entries.amounts, spec.map(([, x]) => x));
  assert.deepEqual(entries.requestIds, batch.map((x) => x.info.requestId));
  assert.deepEqual(entries.keyIds, batch.map((x) => x.info.keyId));
  assert.deepEqual(entries.endpoints, batch.map((x) => x.info.endpoint));
});

test('one account: its id alone, the group total, and offsets counting down', () => {
  const l = lease('acc_only');
  const { entries, ids, totals } = groupColumns([1, 2, 3, 4].map((x, i) => charge(l, x * 100, i)));
  assert.deepEqual(ids, ['acc_only']);
  assert.deepEqual(totals, [1000]);
  assert.deepEqual(entries.later, [900, 700, 400, 0]);
});
