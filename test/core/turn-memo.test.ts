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

// Equal strings built at run time, so not one object: as keys arrive from requests.
const fresh = (s: string) => [...s].join('');

test('a key is read once a turn, whether asked again at once or after other keys', () => {
  const memo = new TurnMemo<string, number | undefined>();
  const s = source();
  s.values.set('a', 1).set('b', 2);
  assert.equal(memo.get(fresh('a'), s.read), 1);
  assert.equal(memo.get(fresh('a'), s.read), 1);
  assert.equal(memo.get(fresh('b'), s.read), 2);
  assert.equal(memo.get(fresh('a'), s.read), 1);
  assert.equal(memo.get(fresh('b'), s.read), 2);
  // A key with no value is remembered too, as the last key and in the Map.
  assert.equal(memo.get('none', s.read), undefined);
  assert.equal(memo.get('none', s.read), undefined);
  assert.equal(memo.get('a', s.read), 1);
  assert.equal(memo.get('none', s.read), undefined);
  assert.deepEqual(s.reads, ['a', 'b', 'none']);
});

test('the next turn reads again: a change made in between is seen, for the last key as for the others', async () => {
  const memo = new TurnMemo<string, number | undefined>();
  const s = source();
  s.values.set('a', 1).set('b', 2);
  memo.get('a', s.read);
  memo.get('b', s.read);
  s.values.set('a', 10).set('b', 20);
  await nextTurn();
  assert.equal(memo.get(fresh('b'), s.read), 20, 'the last key of the turn before');
  assert.equal(memo.get(fresh('a'), s.read), 10);
  assert.deepEqual(s.reads, ['a', 'b', 'b', 'a']);
});

test('delete() makes the next get of that key read again within the turn, the last key included', () => {
  const memo = new TurnMemo<string, number | undefined>();
  const s = source();
  s.values.set('a', 1).set('b', 2);
  memo.get('a', s.read);
  memo.get('b', s.read);
  s.values.set('b', 3).set('a', 4);
  memo.delete(fresh('b'));
  assert.equal(memo.get('b', s.read), 3);
  memo.delete('a');
  assert.equal(memo.get('a', s.read), 4);
  assert.equal(memo.get('b', s.read), 3, 'b not read again');
  assert.deepEqual(s.reads, ['a', 'b', 'b', 'a']);
});

test('clear() forgets everything at once', () => {
  const memo = new TurnMemo<string, number | undefined>();
  const s = source();
  s.values.set('a', 1);
  memo.get('a', s.read);
  s.values.set('a', 2);
  memo.clear();
  assert.equal(memo.get('a', s.read), 2);
  assert.deepEqual(s.reads, ['a', 'a']);
});
