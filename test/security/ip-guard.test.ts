// The per-address guard against key guessing: an address out of its failure budget is refused
// until its retry time, and once every block has ended the guard says so (the auth hook then skips
// reading the request's address), even for addresses that never come back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppError } from '../../src/errors/app-error.js';
import { IpGuard } from '../../src/ratelimit/ip-guard.js';
import { MemoryRateLimiter } from '../../src/ratelimit/rate-limiter.js';

test('an address out of its failure budget is refused until its retry time; the guard stops blocking once all blocks have ended', async () => {
  let now = Date.UTC(2026, 10, 27, 12, 0, 0);
  const clock = () => now;
  const guard = new IpGuard(new MemoryRateLimiter(clock), 2, clock);
  const bad = new AppError('invalid_api_key', 'bad key');
  assert.equal(guard.blocking, false);
  assert.equal((await guard.failed('10.0.0.1', bad)).code, 'invalid_api_key');
  assert.equal((await guard.failed('10.0.0.1', bad)).code, 'invalid_api_key');
  const third = await guard.failed('10.0.0.1', bad);
  assert.equal(third.code, 'rate_limited');
  assert.equal(guard.blocking, true);
  assert.throws(() => guard.check('10.0.0.1'), (e: unknown) => e instanceof AppError && e.code === 'rate_limited');
  guard.check('10.0.0.2'); // another address is not refused
  const retryMs = (third.details as { retryAfterSeconds: number }).retryAfterSeconds * 1000;
  now += retryMs - 1;
  assert.throws(() => guard.check('10.0.0.1'));
  // The blocked address never comes back; another address's request, after the block ended, clears it.
  now += 1001;
  guard.check('10.0.0.2');
  assert.equal(guard.blocking, false);
  guard.check('10.0.0.1');
});

test('the addresses of one IPv6 /64 share one failure budget: a host cannot bring a new address per guess', async () => {
  const now = Date.UTC(2026, 11, 7, 12, 0, 0);
  const guard = new IpGuard(new MemoryRateLimiter(() => now), 2, () => now);
  const bad = new AppError('invalid_api_key', 'bad key');
  assert.equal((await guard.failed('2001:db8:5:6::1', bad)).code, 'invalid_api_key');
  assert.equal((await guard.failed('2001:db8:5:6::2', bad)).code, 'invalid_api_key');
  assert.equal((await guard.failed('2001:db8:5:6:ffff::3', bad)).code, 'rate_limited');
  assert.throws(() => guard.check('2001:db8:5:6:1234::9'), (e: unknown) => e instanceof AppError && e.code === 'rate_limited');
  guard.check('2001:db8:5:7::1'); // the next /64 is another host
});

test('past 100,000 blocked addresses the longest-blocked one goes, not every block at once', async () => {
  const now = Date.UTC(2026, 11, 7, 12, 0, 0);
  // A limiter that refuses every failure: each address is blocked at its first.
  const refuseAll = { take: async () => ({ allowed: false, limit: 1, remaining: 0, resetSeconds: 60, retryAfterSeconds: 60 }), takeAll: () => { throw new Error('unused'); } };
  const guard = new IpGuard(refuseAll as never, 1, () => now);
  const bad = new AppError('invalid_api_key', 'bad key');
  const ip = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  for (let i = 0; i <= 100_000; i++) await guard.failed(ip(i), bad);
  assert.doesNotThrow(() => guard.check(ip(0)), 'the first blocked went');
  for (const i of [1, 50_000, 100_000]) assert.throws(() => guard.check(ip(i)), (e: unknown) => e instanceof AppError && e.code === 'rate_limited', `${ip(i)} still blocked`);
});

test('the in-process limiter past 100,000 buckets: refilled ones go at most once a second, then the fullest; a busy account\'s spent bucket is kept', () => {
  let now = Date.UTC(2026, 11, 7, 12, 0, 0);
  const limiter = new MemoryRateLimiter(() => now);
  const buckets = (limiter as unknown as { buckets: Map<string, unknown> }).buckets;
  // The first bucket made: an account that spends its whole minute.
  for (let i = 0; i < 60; i++) assert.ok(limiter.take('acc_busy', 60).allowed);
  assert.equal(limiter.take('acc_busy', 60).allowed, false);
  now += 10;
  // An attack's 100,000 new addresses within the same second (each a bucket of 60 with one token spent).
  for (let i = 0; i < 100_000; i++) limiter.take(`auth-fail:k${i}`, 60);
  assert.equal(buckets.size, 100_000, 'the first eviction ran, and dropped one of the fullest');
  assert.ok(buckets.has('acc_busy'));
  now += 10;
  assert.equal(limiter.take('acc_busy', 60).allowed, false, 'the busy account was not given a full bucket');
  // Within the second no scan: new buckets stay until the next one.
  for (let i = 0; i < 10; i++) limiter.take(`n${i}`, 60);
  assert.equal(buckets.size, 100_010);
  // Two seconds on, every one-token-spent bucket has refilled and goes; the spent account's stays.
  now += 2_000;
  limiter.take('again', 60);
  assert.deepEqual([...buckets.keys()].sort(), ['acc_busy', 'again']);
  const later = limiter.take('acc_busy', 60);
  assert.ok(later.allowed && later.remaining <= 2, `two seconds refilled two tokens, not the minute: ${JSON.stringify(later)}`);
});
