// ResilientSource with a scripted fake source and an injected clock, random and sleep.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Community, SocialProfile, Tweet } from '../../src/domain/models.js';
import { ResilientSource, type ResilienceEvent, type ResilienceOptions } from '../../src/sources/resilience.js';
import { SourceError, type DataSource, type RetweetEdge, type SourceErrorKind, type SourcePage } from '../../src/sources/types.js';

const profile: SocialProfile = {
  id: '12',
  username: 'jack',
  displayUsername: 'jack',
  name: 'jack',
  description: '',
  location: '',
  url: null,
  profileImageUrl: null,
  bannerUrl: null,
  createdAt: '2006-03-21T20:50:14.000Z',
  verified: false,
  verifiedType: 'none',
  protected: false,
  metrics: { followers: 1, following: 1, tweets: 1, listed: 0, likes: 0, media: 0 },
  pinnedTweetIds: [],
};

type Step = 'ok' | SourceErrorKind | 'hang' | 'bug';

/** A source whose every call takes the next scripted step (then 'ok'), counting calls. */
class ScriptedSource implements DataSource {
  readonly name = 'fake';
  calls = 0;
  constructor(private readonly steps: Step[] = []) {}

  private async next<T>(value: T): Promise<T> {
    this.calls += 1;
    const step = this.steps.shift() ?? 'ok';
    if (step === 'ok') return value;
    if (step === 'hang') return new Promise<T>(() => {});
    if (step === 'bug') throw new TypeError('mapping bug');
    throw new SourceError(step, `scripted ${step}`, step === 'rate_limited' ? new Date(0) : undefined);
  }

  getUserByUsername(): Promise<SocialProfile> {
    return this.next(profile);
  }
  getUserById(): Promise<SocialProfile> {
    return this.next(profile);
  }
  getTweet(): Promise<Tweet> {
    return this.next({} as Tweet);
  }
  getRetweeters(): Promise<SourcePage<RetweetEdge>> {
    return this.next({ items: [] });
  }
  getUserTweets(): Promise<SourcePage<Tweet>> {
    return this.next({ items: [] });
  }
  getCommunity(): Promise<Community> {
    return this.next({} as Community);
  }
}

function harness(steps: Step[], options: ResilienceOptions = {}) {
  const inner = new ScriptedSource(steps);
  const clock = { now: 1_000_000 };
  const sleeps: number[] = [];
  const events: ResilienceEvent[] = [];
  const source = new ResilientSource(inner, {
    now: () => clock.now,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.now += ms;
    },
    onEvent: (e) => events.push(e),
    baseDelayMs: 100,
    maxDelayMs: 1_000,
    ...options,
  });
  return { inner, clock, sleeps, events, source };
}

async function rejectsKind(promise: Promise<unknown>, kind: SourceErrorKind, message?: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof SourceError, String(err));
    assert.equal(err.kind, kind);
    if (message) assert.match(err.message, message);
    return true;
  });
}

describe('ResilientSource retries', () => {
  it('retries unavailable and timeout with full-jitter exponential backoff', async () => {
    const { inner, sleeps, source } = harness(['unavailable', 'timeout'], { maxAttempts: 3 });
    assert.deepEqual(await source.getUserById('12'), profile);
    assert.equal(inner.calls, 3);
    assert.deepEqual(sleeps, [50, 100]); // 0.5 × 100, 0.5 × 200
  });

  it('caps the backoff at maxDelayMs and uses the random draw', async () => {
    const draws = [0, 0.999, 0.25];
    const { sleeps, source } = harness(['unavailable', 'unavailable', 'unavailable'], {
      maxAttempts: 4,
      baseDelayMs: 400,
      maxDelayMs: 1_000,
      failureThreshold: 10,
      random: () => draws.shift() ?? 0,
    });
    await source.getTweet('1');
    assert.deepEqual(sleeps, [0, 799, 250]); // min(1000, 400), min(1000, 800), min(1000, 1600)
  });

  it('gives up after maxAttempts with the last error', async () => {
    const { inner, source } = harness(['unavailable', 'unavailable', 'timeout'], { maxAttempts: 3 });
    await rejectsKind(source.getUserTweets('12', { limit: 5 }), 'timeout');
    assert.equal(inner.calls, 3);
  });

  for (const kind of ['not_found', 'protected', 'suspended', 'rate_limited', 'bad_response'] as const) {
    it(`does not retry ${kind}`, async () => {
      const { inner, sleeps, source } = harness([kind]);
      await rejectsKind(source.getUserByUsername('jack'), kind);
      assert.equal(inner.calls, 1);
      assert.deepEqual(sleeps, []);
    });
  }

  it('does not retry errors that are not SourceErrors', async () => {
    const { inner, source } = harness(['bug']);
    await assert.rejects(source.getCommunity('1'), TypeError);
    assert.equal(inner.calls, 1);
  });

  it('times out a call that does not answer, and retries it', async () => {
    const { inner, source } = harness(['hang'], { timeoutMs: 30 });
    assert.deepEqual(await source.getRetweeters('1', { limit: 5 }), { items: [] });
    assert.equal(inner.calls, 2);
    const lone = harness(['hang'], { timeoutMs: 30, maxAttempts: 1 });
    await rejectsKind(lone.source.getUserById('1'), 'timeout', /fake did not answer getUserById within 30 ms/);
  });

  it('keeps the inner source name', () => {
    assert.equal(harness([]).source.name, 'fake');
  });
});

describe('ResilientSource circuit breaker', () => {
  it('opens after N consecutive failures and then rejects without calling', async () => {
    const { inner, source, events } = harness(['unavailable', 'unavailable', 'unavailable'], {
      maxAttempts: 1,
      failureThreshold: 3,
      cooldownMs: 10_000,
    });
    for (let i = 0; i < 3; i += 1) await rejectsKind(source.getUserById('1'), 'unavailable', /scripted/);
    assert.equal(source.circuitState, 'open');
    await rejectsKind(source.getUserById('1'), 'unavailable', /circuit open/);
    assert.equal(inner.calls, 3);
    assert.deepEqual(events, [{ type: 'circuit', state: 'open' }]);
  });

  it('stops retrying once the circuit opens', async () => {
    const { inner, source } = harness(['unavailable', 'unavailable', 'unavailable', 'unavailable'], {
      maxAttempts: 5,
      failureThreshold: 2,
    });
    await rejectsKind(source.getUserById('1'), 'unavailable', /scripted/);
    assert.equal(inner.calls, 2);
    assert.equal(source.circuitState, 'open');
  });

  it('successes and non-failures reset the count of consecutive failures', async () => {
    const { source } = harness(['unavailable', 'not_found', 'unavailable', 'ok', 'unavailable'], {
      maxAttempts: 1,
      failureThreshold: 2,
    });
    await rejectsKind(source.getUserById('1'), 'unavailable');
    await rejectsKind(source.getUserById('1'), 'not_found');
    await rejectsKind(source.getUserById('1'), 'unavailable');
    await source.getUserById('1');
    await rejectsKind(source.getUserById('1'), 'unavailable');
    assert.equal(source.circuitState, 'closed');
  });

  it('half-open after the cooldown lets exactly one trial through at a time', async () => {
    const { inner, clock, source } = harness(['unavailable', 'unavailable', 'hang'], {
      maxAttempts: 1,
      failureThreshold: 2,
      cooldownMs: 10_000,
      timeoutMs: 50,
    });
    await rejectsKind(source.getUserById('1'), 'unavailable');
    await rejectsKind(source.getUserById('1'), 'unavailable');
    clock.now += 9_999;
    await rejectsKind(source.getUserById('1'), 'unavailable', /circuit open/);
    clock.now += 1;
    assert.equal(source.circuitState, 'half_open');

    const trial = source.getUserById('1'); // the trial: it hangs, then times out
    await rejectsKind(source.getUserById('1'), 'unavailable', /circuit open/); // refused while the trial is out
    assert.equal(inner.calls, 3);
    await rejectsKind(trial, 'timeout');
    assert.equal(source.circuitState, 'open');
  });

  it('a successful trial closes the circuit', async () => {
    const { clock, source, events } = harness(['unavailable', 'unavailable'], { maxAttempts: 1, failureThreshold: 2, cooldownMs: 10_000 });
    await rejectsKind(source.getUserById('1'), 'unavailable');
    await rejectsKind(source.getUserById('1'), 'unavailable');
    clock.now += 10_000;
    assert.deepEqual(await source.getUserById('1'), profile);
    assert.equal(source.circuitState, 'closed');
    assert.deepEqual(
      events.map((e) => (e.type === 'circuit' ? e.state : e.type)),
      ['open', 'half_open', 'closed'],
    );
  });

  it('a failed trial opens the circuit for another cooldown', async () => {
    const { inner, clock, source } = harness(['unavailable', 'unavailable', 'timeout'], {
      maxAttempts: 3,
      failureThreshold: 2,
      cooldownMs: 10_000,
    });
    await rejectsKind(source.getUserById('1'), 'unavailable'); // two attempts, then open
    clock.now += 10_000;
    await rejectsKind(source.getUserById('1'), 'timeout'); // the trial fails: no retry
    assert.equal(inner.calls, 3);
    assert.equal(source.circuitState, 'open');
    clock.now += 9_999;
    await rejectsKind(source.getUserById('1'), 'unavailable', /circuit open/);
    clock.now += 1;
    await source.getUserById('1');
    assert.equal(source.circuitState, 'closed');
  });

  it('rate_limited neither opens nor closes the circuit', async () => {
    const { source } = harness(['unavailable', 'rate_limited', 'unavailable'], { maxAttempts: 1, failureThreshold: 2 });
    await rejectsKind(source.getUserById('1'), 'unavailable');
    await rejectsKind(source.getUserById('1'), 'rate_limited');
    await rejectsKind(source.getUserById('1'), 'unavailable');
    assert.equal(source.circuitState, 'open');
  });
});
