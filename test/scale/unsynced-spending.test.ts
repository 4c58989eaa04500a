// What a Postgres API process has spent from its lease rows since its last sync (no Postgres needed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UnsyncedSpending } from '../../src/credits/unsynced-spending.js';

test('the spending since the last sync goes to the sync once, with the highest entry id; a failed sync keeps it for the accounts still leased', async () => {
  const u = new UnsyncedSpending();
  const calls: Array<[string[], number[], number]> = [];
  const sync = async (ids: string[], amounts: number[], upTo: number) => void calls.push([ids, amounts, upTo]);
  await u.syncWith(false, sync, () => true);
  assert.deepEqual(calls, [], 'nothing spent: no statement');
  u.add('acc_a', 3);
  u.add('acc_b', 5);
  u.add('acc_a', 4);
  u.committed(40);
  u.committed(12);
  await u.syncWith(false, sync, () => true);
  assert.deepEqual(calls, [[['acc_a', 'acc_b'], [7, 5], 40]]);
  u.add('acc_a', 1);
  await u.syncWith(false, sync, () => true);
  assert.equal(calls.length, 1, 'under a second since the last: not yet');
  u.forget('acc_a');
  u.add('acc_c', 2);
  u.committed(41);
  await assert.rejects(
    u.syncWith(true, async () => Promise.reject(new Error('down')), (a) => a !== 'acc_d'),
    /down/,
  );
  u.add('acc_d', 9);
  u.forget('acc_d');
  await u.syncWith(true, sync, () => true);
  assert.deepEqual(calls[1], [['acc_c'], [2], 41], "the failed sync's spending kept (acc_a's row was forgotten before it)");
});

test('a failed sync keeps nothing for an account no longer leased', async () => {
  const u = new UnsyncedSpending();
  u.add('acc_a', 3);
  u.add('acc_b', 4);
  u.committed(7);
  await assert.rejects(u.syncWith(true, async () => Promise.reject(new Error('down')), (a) => a === 'acc_b'));
  const calls: Array<[string[], number[], number]> = [];
  await u.syncWith(true, async (ids, amounts, upTo) => void calls.push([ids, amounts, upTo]), () => true);
  assert.deepEqual(calls, [[['acc_b'], [4], 7]]);
});
