import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countText } from '../../src/http/count-text.js';

test('countText writes the digits String() writes, for every size of count, and toFixed(0) for anything else', () => {
  const counts = [0, 1, 9, 10, 99, 100, 999, 1000, 1001, 1010, 1100, 9999, 10_000, 100_000, 999_999, 1_000_000, 1_000_001, 12_345_678, 999_999_999_999, 1_000_000_000_000, 123_456_789_012_345, Number.MAX_SAFE_INTEGER];
  for (let i = 0; i < 2_000; i++) counts.push(Math.floor(Math.random() * 10 ** (1 + (i % 15))));
  for (const n of counts) assert.equal(countText(n), String(n), `${n}`);
  for (const n of [-1, -1234, 0.5, 1234.5, 2 ** 60, Infinity, NaN]) assert.equal(countText(n), n.toFixed(0), `${n}`);
});
