// The upstream rate-limit tracker on its own: reservations, windows, waits, refusals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SourceError } from '../../src/sources/types.js';
import { RateLimitTracker, readRateLimitHeaders } from '../../src/sources/rate-limits.js';

const T0 = 1_750_000_000_000;
const KEY = 'GET /2/users/:id/tweets';

function tracker(start = T0) {
  const clock = { now: start, slept: [] as number[] };
  const limits = new RateLimitTracker({
    now: () => clock.now,
    sleep: async (ms) => {
      clock.slept.push(ms);
      clock.now += ms;
    },
  });
  return { clock, limits };
}

async function refused(promise: Promise<unknown>): Promise<SourceError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof SourceError && err.kind === 'rate_limited', String(err));
    return err;
  }
  assert.fail('expected rate_limited');
}

describe('RateLimitTracker', () => {
  it('reads X headers', () => {
    const headers = new Headers({ 'x-rate-limit-limit': '900', 'x-rate-limit-remaining': '899', 'x-rate-limit-reset': '1750000900' });
    assert.deepEqual(readRateLimitHeaders(headers), { limit: 900, remaining: 899, resetAtMs: 1_750_000_900_000 });
    assert.deepEqual(readRateLimitHeaders(new Headers({ 'x-rate-limit-remaining': 'soon' })), {
      limit: undefined,
      remaining: undefined,
      resetAtMs: undefined,
    });
  });

  it('lets calls through while nothing is known', async () => {
    const { limits } = tracker();
    await limits.acquire(KEY, 0);
    await limits.acquire(KEY, 0);
    assert.equal(limits.state(KEY)?.inFlight, 2);
  });

  it('never has more calls out than X said remain, counting calls in flight', async () => {
    const { limits } = tracker();
    await limits.acquire(KEY, 0);
    limits.settle(KEY, 200, { limit: 3, remaining: 2, resetAtMs: T0 + 900_000 });
    await limits.acquire(KEY, 0);
    await limits.acquire(KEY, 0); // two reserved, none answered yet
    const err = await refused(limits.acquire(KEY, 0));
    assert.equal(err.resetAt?.getTime(), T0 + 900_000);
    // An answer that still says 1 remaining (it did not count the other call in flight) frees nothing.
    limits.settle(KEY, 200, { limit: 3, remaining: 1, resetAtMs: T0 + 900_000 });
    await refused(limits.acquire(KEY, 0));
    assert.equal(limits.state(KEY)?.remaining, 0);
  });

  it('waits for the reset when it is within maxWaitMs, then has the full limit again', async () => {
    const { clock, limits } = tracker();
    await limits.acquire(KEY, 0);
    limits.settle(KEY, 200, { limit: 2, remaining: 0, resetAtMs: T0 + 5_000 });
    await refused(limits.acquire(KEY, 4_999));
    await limits.acquire(KEY, 5_000);
    assert.deepEqual(clock.slept, [5_000]);
    assert.equal(limits.state(KEY)?.remaining, 1);
  });

  it('keys are independent', async () => {
    const { limits } = tracker();
    await limits.acquire(KEY, 0);
    limits.settle(KEY, 429, { remaining: 0, resetAtMs: T0 + 60_000 });
    await refused(limits.acquire(KEY, 0));
    await limits.acquire('GET /2/tweets/:id', 0);
  });

  it('a 429 blocks until its reset, or for the fallback when X gives none', async () => {
    const { clock, limits } = tracker();
    await limits.acquire(KEY, 0);
    const resetAt = limits.settle(KEY, 429, {});
    assert.equal(resetAt?.getTime(), T0 + 60_000);
    clock.now = T0 + 59_999;
    await refused(limits.acquire(KEY, 0));
    clock.now = T0 + 60_000;
    await limits.acquire(KEY, 0);
  });

  it('a failed request (no answer) releases its slot but not its reservation', async () => {
    const { limits } = tracker();
    await limits.acquire(KEY, 0);
    limits.settle(KEY, 200, { limit: 5, remaining: 1, resetAtMs: T0 + 1_000 });
    await limits.acquire(KEY, 0);
    limits.settle(KEY, undefined);
    assert.equal(limits.state(KEY)?.inFlight, 0);
    await refused(limits.acquire(KEY, 0));
  });
});
