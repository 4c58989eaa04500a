import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findCause } from '../../src/errors/cause-chain.js';

class Wanted extends Error {}

test('findCause finds the error itself, or one a few causes down, and nothing else', () => {
  const wanted = new Wanted('deep');
  const chain = new TypeError('fetch failed', { cause: new Error('wrapper', { cause: wanted }) });
  assert.equal(findCause(chain, (e): e is Wanted => e instanceof Wanted), wanted);
  assert.equal(findCause(wanted, (e) => e instanceof Wanted), wanted);
  assert.equal(findCause(new Error('a', { cause: new Error('b') }), (e) => e instanceof Wanted), undefined);
  // A cause that is not an Error (a string, an object literal) ends the chain.
  assert.equal(findCause(new Error('a', { cause: { name: 'TimeoutError' } }), (e) => e.name === 'TimeoutError'), undefined);
  assert.equal(findCause('not an error', () => true), undefined);
});

test('findCause stops on a circular chain and past ten links', () => {
  const a = new Error('a');
  const b = new Error('b', { cause: a });
  a.cause = b;
  assert.equal(findCause(a, (e) => e instanceof Wanted), undefined);
  let deep: Error = new Wanted('eleventh');
  for (let i = 0; i < 10; i++) deep = new Error(`link ${i}`, { cause: deep });
  assert.equal(findCause(deep, (e) => e instanceof Wanted), undefined);
  let near: Error = new Wanted('tenth');
  for (let i = 0; i < 9; i++) near = new Error(`link ${i}`, { cause: near });
  assert.ok(findCause(near, (e) => e instanceof Wanted));
});
