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
