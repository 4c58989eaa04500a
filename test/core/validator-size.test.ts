// The request validators' size guard: what decides whether a failing value is checked for all its errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FULL_CHECK_VALUES, hasMoreValuesThan, validatorCompiler } from '../../src/http/validators.js';

test('hasMoreValuesThan counts values and keys, however deep, without recursion', () => {
  assert.equal(hasMoreValuesThan({ a: 1, b: [1, 2] }, 10), false);
  assert.equal(hasMoreValuesThan(Array.from({ length: 11 }, () => 1), 10), true);
  assert.equal(hasMoreValuesThan({ items: Array.from({ length: 100 }, (_, i) => ({ username: `u${i}` })) }, FULL_CHECK_VALUES), false);
  // Keys count: an object of many unknown fields is as much work as an array of as many items.
  assert.equal(hasMoreValuesThan(Object.fromEntries(Array.from({ length: 1_500 }, (_, i) => [`k${i}`, 1])), FULL_CHECK_VALUES), true);
  // 100,000 levels deep: a recursive count would overflow the stack.
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  assert.equal(hasMoreValuesThan(deep, FULL_CHECK_VALUES), true);
  assert.equal(hasMoreValuesThan(deep, 200_000), false);
});

test('a small value that fails is checked for all its errors, a large one stops at its first', () => {
  const schema = { type: 'object', properties: { items: { type: 'array', items: { type: 'string' } } }, additionalProperties: false };
  const validate = validatorCompiler()({ schema, httpPart: 'body', method: 'POST', url: '/' }) as ((d: unknown) => boolean) & { errors: Array<{ instancePath: string }> | null };
  assert.equal(validate({ items: ['a', 'b'] }), true);
  assert.equal(validate({ items: [1, 'b', 2], extra: 1 }), false);
  assert.equal(validate.errors?.length, 3);
  assert.equal(validate({ items: Array.from({ length: FULL_CHECK_VALUES + 1 }, () => 1) }), false);
  assert.deepEqual(
    validate.errors?.map((e) => e.instancePath),
    ['/items/0'],
  );
});
