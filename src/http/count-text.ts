// A count that changes from one request to the next (a balance, the calls left this minute) as a
// header value. Not String(n): V8 keeps the strings it makes from numbers in a cache that lives in the
// old generation, so a number new on each request leaves its string there until a full collection.
// Under the charged tweet (50 connections) that was 26 of the 70 bytes a request that outlived a
// scavenge. Nor toFixed(0), which made the same digits without the cache but through a call into
// V8's runtime of about a thousand instructions (docs/benchmarks.md, 2026-12-07): the digits are
// joined from a table of the numbers below 1,000, three at a time, without the cache either.
const BELOW_1000 = Array.from({ length: 1000 }, (_, i) => String(i));
const THREE_DIGITS = BELOW_1000.map((s) => s.padStart(3, '0'));

export function countText(n: number): string {
  if (!(n >= 0 && n <= Number.MAX_SAFE_INTEGER) || n !== Math.floor(n)) return n.toFixed(0);
  if (n < 1000) return BELOW_1000[n]!;
  let text = THREE_DIGITS[n % 1000]!;
  n = Math.floor(n / 1000);
  while (n >= 1000) {
    text = THREE_DIGITS[n % 1000]! + text;
    n = Math.floor(n / 1000);
  }
  return BELOW_1000[n]! + text;
}
