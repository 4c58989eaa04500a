// TurnMemo: one read per key per event-loop turn, a fresh read on the next turn or after delete(),
// whether the key is the last one asked for (compared, not hashed) or an earlier one (the Map).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { TurnMemo } from '../../src/db/turn-memo.js';

/** A store whose value for a key can change between reads, counting the reads. */
function source() {
  const values = new Map<string, number | undefined>();
  const reads: string[] = [];
  return { values, reads, read: (k: string) => (reads.push(k), values.get(k)) };
}

// Equal strings built at run time, so not one object, as keys arrive from requests (longer than one
// character: V8 keeps one string for each single character).
const fresh = (s: string) => [...s].join('');
const A = 'sdg_key_aaaaaaaa';
const B = 'sdg_key_bbbbbbbb';

test('a key is read once a turn, whether asked again at once or after other keys', () => {
  const memo = new TurnMemo<string, number | undefined>();
  const s = source();
  s.values.set(A, 1).set(B, 2);
  assert.equal(memo.get(fresh(A), s.read), 1);
  assert.equal(memo.get(fresh(A), s.read), 1);
  assert.equal(memo.get(fresh(B), s.read), 2);
  assert.equal(memo.get(fresh(A), s.read), 1);
  assert.equal(memo.get(fresh(B), s.read), 2);
  // A key with no value is remembered too, as the last key and in the Map.
  assert.equal(memo.get('none', s.read), undefined);
  assert.equal(memo.get('none', s.read), undefined);
  assert.equal(memo.get(A, s.read), 1);
  assert.equal(memo.get('none', s.read), undefined);
  assert.deepEqual(s.reads, [A, B, 'none']);
});

test('the next turn reads again: a change made in between is seen, for the last key as for the others', async () => {
  const memo = new TurnMemo<string, number | undefined>();
  const s = source();
  s.values.set(A, 1).set(B, 2);
  memo.get(A, s.read);
  memo.get(B, s.read);
  s.values.set(A, 10).set(B, 20);
  await nextTurn();
  assert.equal(memo.get(fresh(B), s.read), 20, 'the last key of the turn before');
  assert.equal(memo.get(fresh(A), s.read), 10);
  assert.deepEqual(s.reads, [A, B, B, A]);
});

test('delete() makes the next get of that key read again within the turn, the last key included', () => {
  const memo = new TurnMemo<string, number | undefined>();
  const s = source();
  s.values.set(A, 1).set(B, 2);
  memo.get(A, s.read);
  memo.get(B, s.read);
  s.values.set(B, 3).set(A, 4);
  memo.delete(fresh(B));
  assert.equal(memo.get(B, s.read), 3);
  memo.delete(A);
  assert.equal(memo.get(A, s.read), 4);
  assert.equal(memo.get(B, s.read), 3, 'b not read again');
  assert.deepEqual(s.reads, [A, B, B, A]);
});

test('clear() forgets everything at once', () => {
  const memo = new TurnMemo<string, number | undefined>();
  const s = source();
  s.values.set(A, 1);
  memo.get(A, s.read);
  s.values.set(A, 2);
  memo.clear();
  assert.equal(memo.get(A, s.read), 2);
  assert.deepEqual(s.reads, [A, A]);
});

test('a read that throws is not remembered: the key is read again, and the last key before it still answers', () => {
  const memo = new TurnMemo<string, number | undefined>();
  const s = source();
  s.values.set(A, 1);
  memo.get(A, s.read);
  let fail = true;
  const flaky = (k: string) => {
    s.reads.push(k);
    if (fail) throw new Error('store busy');
    return 7;
  };
  assert.throws(() => memo.get(B, flaky), /store busy/);
  assert.equal(memo.get(A, s.read), 1);
  fail = false;
  assert.equal(memo.get(B, flaky), 7);
  assert.deepEqual(s.reads, [A, B, B]);
});
