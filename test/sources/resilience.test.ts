// ResilientSource (cockatiel's retry, circuit breaker and timeout around any DataSource) and
// callSource, with a scripted source that records the signal each call was given.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Community, SocialProfile, Tweet } from '../../src/domain/models.js';
import { callSource, ResilientSource, type ResilienceOptions, type RetryEvent } from '../../src/sources/resilience.js';
import { SourceError, type CallOptions, type DataSource, type RetweetEdge, type SourceErrorKind, type SourcePage } from '../../src/sources/types.js';
import { DemoSource } from '../../src/sources/demo/demo-source.js';
import { demoSample } from '../../src/sources/demo/sample.js';

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

/** A source whose every call takes the next scripted step (then 'ok'), keeping each call's signal. */
class ScriptedSource implements DataSource {
  readonly name = 'fake';
  readonly signals: Array<AbortSignal | undefined> = [];
  probes = 0;
  probeStep: Step = 'ok';
  constructor(private readonly steps: Step[] = []) {}

  get calls(): number {
    return this.signals.length;
  }

  private async next<T>(value: T, call: CallOptions | undefined): Promise<T> {
    this.signals.push(call?.signal);
    return this.act(this.steps.shift() ?? 'ok', value, call);
  }

  private async act<T>(step: Step, value: T, call: CallOptions | undefined): Promise<T> {
    if (step === 'ok') return value;
    if (step === 'hang') return new Promise<T>((_, reject) => call?.signal?.addEventListener('abort', () => reject(call.signal!.reason)));
    if (step === 'bug') throw new TypeError('mapping bug');
    throw new SourceError(step, `scripted ${step}`, step === 'rate_limited' ? new Date(Date.now() + 60_000) : undefined, { status: 599, body: 'what the upstream said' });
  }

  getUserByUsername(_u: string, call?: CallOptions): Promise<SocialProfile> {
    return this.next(profile, call);
  }
  getUserById(_id: string, call?: CallOptions): Promise<SocialProfile> {
    return this.next(profile, call);
  }
  getTweet(_id: string, call?: CallOptions): Promise<Tweet> {
    return this.next({} as Tweet, call);
  }
  getRetweeters(_id: string, _p: unknown, call?: CallOptions): Promise<SourcePage<RetweetEdge>> {
    return this.next({ items: [] }, call);
  }
  getUserTweets(_id: string, _q: unknown, call?: CallOptions): Promise<SourcePage<Tweet>> {
    return this.next({ items: [] }, call);
  }
  getCommunity(_id: string, call?: CallOptions): Promise<Community> {
    return this.next({} as Community, call);
  }
  async probe(call?: CallOptions): Promise<void> {
    this.probes += 1;
    await this.act(this.probeStep, undefined, call);
  }
}

interface Line {
  level: 'debug' | 'info' | 'warn';
  obj: Record<string, unknown>;
  msg: string;
}

function harness(steps: Step[], options: ResilienceOptions = {}) {
  const inner = new ScriptedSource(steps);
  const retries: RetryEvent[] = [];
  const lines: Line[] = [];
  const log = {
    debug: (obj: object, msg: string) => void lines.push({ level: 'debug', obj: obj as Record<string, unknown>, msg }),
    info: (obj: object, msg: string) => void lines.push({ level: 'info', obj: obj as Record<string, unknown>, msg }),
    warn: (obj: object, msg: string) => void lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
  };
  const source = new ResilientSource(inner, {
    random: () => 0.5,
    retry: { retries: 2, baseDelayMs: 10, maxDelayMs: 100, maxRateLimitWaitMs: 0, maxRateLimitWaits: 0 },
    onRetry: (e) => retries.push(e),
    log,
    ...options,
  });
  return { inner, retries, lines, source };
}

async function rejectsKind(promise: Promise<unknown>, kind: SourceErrorKind, message?: RegExp): Promise<SourceError> {
  let caught: SourceError | undefined;
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof SourceError, String(err));
    assert.equal(err.kind, kind, err.message);
    if (message) assert.match(err.message, message);
    caught = err;
    return true;
  });
  return caught!;
}

const once = { retries: 0, baseDelayMs: 1, maxDelayMs: 1, maxRateLimitWaitMs: 0, maxRateLimitWaits: 0 };

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ResilientSource retries', () => {
  it('retries unavailable and timeout with full-jitter exponential backoff', async () => {
    const { inner, retries, source } = harness(['unavailable', 'timeout']);
    assert.deepEqual(await source.getUserById('12'), profile);
    assert.equal(inner.calls, 3);
    assert.deepEqual(retries.map((r) => [r.attempt, r.delayMs, r.error.kind]), [[1, 5, 'unavailable'], [2, 10, 'timeout']]); // 0.5 × 10, 0.5 × 20
  });

  it('gives up after the policy\'s retries with the last error', async () => {
    const { inner, source } = harness(['unavailable', 'unavailable', 'timeout']);
    await rejectsKind(source.getUserTweets('12', { limit: 5 }), 'timeout');
    assert.equal(inner.calls, 3);
  });

  for (const kind of ['not_found', 'protected', 'suspended', 'rate_limited', 'bad_response', 'rejected'] as const) {
    it(`does not retry ${kind}`, async () => {
      const { inner, retries, source } = harness([kind]);
      await rejectsKind(source.getUserByUsername('jack'), kind);
      assert.equal(inner.calls, 1);
      assert.deepEqual(retries, []);
    });
  }

  it('does not retry errors that are not SourceErrors', async () => {
    const { inner, source } = harness(['bug']);
    await assert.rejects(source.getCommunity('1'), TypeError);
    assert.equal(inner.calls, 1);
  });

  it('keeps the inner source name', () => {
    assert.equal(harness([]).source.name, 'fake');
  });
});

describe('ResilientSource timeouts abort the call they give up on', () => {
  it("each attempt gets its own signal; the timeout aborts it, and the next attempt's is fresh", async () => {
    const { inner, source } = harness(['hang'], { timeoutMs: 30 });
    assert.deepEqual(await source.getRetweeters('1', { limit: 5 }), { items: [] });
    assert.equal(inner.calls, 2);
    assert.equal(inner.signals[0]?.aborted, true, 'the timed-out attempt was aborted');
    assert.equal(inner.signals[1]?.aborted, false, 'the next attempt has a fresh signal');
  });

  it('a lone attempt that hangs rejects as timeout, naming the source, call and limit', async () => {
    const { inner, source } = harness(['hang'], { timeoutMs: 30, retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1, maxRateLimitWaitMs: 0, maxRateLimitWaits: 0 } });
    await rejectsKind(source.getUserById('1'), 'timeout', /fake did not answer getUserById within 30 ms/);
    assert.equal(inner.signals[0]?.aborted, true);
  });

  it("the caller's abort reaches the source, and the call rejects with the caller's reason (no retry)", async () => {
    const { inner, source } = harness(['hang']);
    const ac = new AbortController();
    const pending = source.getUserById('1', { signal: ac.signal });
    await pause(10);
    ac.abort(new Error('job stopping'));
    await assert.rejects(pending, /job stopping/);
    assert.equal(inner.calls, 1);
    assert.equal(inner.signals[0]?.aborted, true);
  });
});

describe('ResilientSource circuit breaker', () => {
  it('opens after N transient failures in a row, then rejects at once without calling', async () => {
    const { inner, source, lines } = harness(['unavailable', 'timeout', 'unavailable'], { retry: once, failureThreshold: 3, halfOpenAfterMs: 10_000 });
    for (let i = 0; i < 3; i += 1) await rejectsKind(source.getUserById('1'), i === 1 ? 'timeout' : 'unavailable', /scripted/);
    assert.equal(source.circuitState, 'open');
    const openedBy = Date.now();
    const refused = await source.getUserById('1').then(() => assert.fail('resolved'), (e: unknown) => e);
    assert.ok(refused instanceof SourceError && /circuit open: fake failed repeatedly/.test(refused.message));
    // It says when the trial call may go: halfOpenAfterMs after the circuit opened.
    const reset = refused.resetAt?.getTime() ?? 0;
    assert.ok(reset > openedBy + 9_000 && reset <= openedBy + 10_000, `resetAt ${reset - openedBy} ms from opening`);
    assert.equal(inner.calls, 3);
    assert.ok(lines.some((l) => l.level === 'warn' && l.obj.circuit === 'open'));
  });

  it('stops retrying once the circuit opens', async () => {
    const { inner, source } = harness(['unavailable', 'unavailable', 'unavailable', 'unavailable'], { failureThreshold: 2 });
    await rejectsKind(source.getUserById('1'), 'unavailable', /circuit open/);
    assert.equal(inner.calls, 2);
    assert.equal(source.circuitState, 'open');
  });

  it('answers that show the upstream is up (not found, rate limited, rejected) do not open it', async () => {
    const { source } = harness(['unavailable', 'not_found', 'rate_limited', 'rejected', 'ok', 'unavailable'], { retry: once, failureThreshold: 2 });
    await rejectsKind(source.getUserById('1'), 'unavailable');
    await rejectsKind(source.getUserById('1'), 'not_found');
    await rejectsKind(source.getUserById('1'), 'rate_limited');
    await rejectsKind(source.getUserById('1'), 'rejected');
    await source.getUserById('1'); // a success resets the count
    await rejectsKind(source.getUserById('1'), 'unavailable');
    assert.equal(source.circuitState, 'closed');
  });

  it('half-opens after halfOpenAfterMs: one trial goes through, the others wait for it; success closes it', async () => {
    const { inner, source, lines } = harness(['unavailable', 'unavailable'], { retry: once, failureThreshold: 2, halfOpenAfterMs: 80 });
    await rejectsKind(source.getUserById('1'), 'unavailable');
    await rejectsKind(source.getUserById('1'), 'unavailable');
    await rejectsKind(source.getUserById('1'), 'unavailable', /circuit open/);
    await pause(100);
    const [a, b] = await Promise.all([source.getUserById('1'), source.getUserById('2')]);
    assert.deepEqual([a, b], [profile, profile]);
    assert.equal(inner.calls, 4);
    assert.equal(source.circuitState, 'closed');
    assert.deepEqual(lines.filter((l) => l.obj.circuit !== undefined).map((l) => l.obj.circuit), ['open', 'half_open', 'closed']);
  });

  it('a failed trial opens it again for another wait', async () => {
    const { inner, source } = harness(['unavailable', 'unavailable', 'hang'], { retry: once, failureThreshold: 2, halfOpenAfterMs: 80, timeoutMs: 30 });
    await rejectsKind(source.getUserById('1'), 'unavailable');
    await rejectsKind(source.getUserById('1'), 'unavailable');
    await pause(100);
    const trial = source.getUserById('1'); // hangs, then times out
    const waiting = source.getUserById('2'); // waits for the trial, then finds the circuit open
    await rejectsKind(trial, 'timeout');
    await rejectsKind(waiting, 'unavailable', /circuit open/);
    assert.equal(inner.calls, 3);
    assert.equal(source.circuitState, 'open');
    await pause(100);
    await source.getUserById('1');
    assert.equal(source.circuitState, 'closed');
  });
});

describe('ResilientSource logs', () => {
  it('every failed attempt at debug with what the upstream said; rejected also at warn', async () => {
    const { source, lines } = harness(['unavailable', 'rejected']);
    await rejectsKind(source.getUserById('1'), 'rejected');
    const failures = lines.filter((l) => l.obj.operation === 'getUserById');
    assert.deepEqual(
      failures.map((l) => [l.level, l.obj.attempt, l.obj.kind, (l.obj.upstream as { body: string }).body]),
      [
        ['debug', 1, 'unavailable', 'what the upstream said'],
        ['warn', 2, 'rejected', 'what the upstream said'],
      ],
    );
  });
});

describe('ResilientSource readiness probe', () => {
  it("runs the source's probe, keeps its answer for probeTtlMs, and runs one probe for concurrent asks", async () => {
    const { inner, source } = harness([], { probeTtlMs: 60 });
    await Promise.all([source.probe(), source.probe(), source.probe()]);
    assert.equal(inner.probes, 1);
    inner.probeStep = 'unavailable';
    await source.probe(); // still the kept answer
    assert.equal(inner.probes, 1);
    await pause(70);
    await rejectsKind(source.probe(), 'unavailable', /scripted/);
    await rejectsKind(source.probe(), 'unavailable', /scripted/); // the failure is kept too
    assert.equal(inner.probes, 2);
  });

  it('a call that just succeeded stands for a probe; a rate limit means the upstream is up', async () => {
    const { inner, source } = harness([], { probeTtlMs: 60 });
    await source.getUserById('1');
    await source.probe();
    assert.equal(inner.probes, 0);
    await pause(70);
    inner.probeStep = 'rate_limited';
    await source.probe();
    assert.equal(inner.probes, 1);
  });

  it('an open circuit is not ready, without probing; a probe that hangs times out', async () => {
    const { inner, source } = harness(['unavailable'], { retry: once, failureThreshold: 1, timeoutMs: 40 });
    await rejectsKind(source.getUserById('1'), 'unavailable');
    await rejectsKind(source.probe(), 'unavailable', /circuit open/);
    assert.equal(inner.probes, 0);

    const hanging = harness([], { timeoutMs: 40 });
    hanging.inner.probeStep = 'hang';
    await rejectsKind(hanging.source.probe(), 'timeout', /within 40 ms/);
  });
});

describe('callSource (background jobs)', () => {
  it("passes the job's signal down to the source, so stopping the job cancels the request", async () => {
    const inner = new ScriptedSource(['hang']);
    const ac = new AbortController();
    const pending = callSource((call) => inner.getUserById('1', call), { retries: 3, baseDelayMs: 1, maxDelayMs: 1, maxRateLimitWaitMs: 0, maxRateLimitWaits: 0 }, ac.signal);
    await pause(10);
    ac.abort(new Error('stop'));
    await assert.rejects(pending, /stop/);
    assert.equal(inner.signals[0]?.aborted, true);
  });
});

describe('callSource and an open circuit', () => {
  it('a background call waits out the open circuit (until its trial call) instead of failing at once; an API call does not', async () => {
    const { inner, source } = harness(['unavailable', 'unavailable'], { retry: once, failureThreshold: 2, halfOpenAfterMs: 150 });
    await rejectsKind(source.getUserById('1'), 'unavailable');
    await rejectsKind(source.getUserById('1'), 'unavailable');
    assert.equal(source.circuitState, 'open');
    const patient = { retries: 0, baseDelayMs: 1, maxDelayMs: 1, maxRateLimitWaitMs: 5_000, maxRateLimitWaits: 2 };
    // No rate-limit waits allowed (as an API call's policy): refused at once, no call made.
    await rejectsKind(callSource((call) => source.getUserById('1', call), { ...patient, maxRateLimitWaits: 0 }, new AbortController().signal), 'unavailable', /circuit open/);
    assert.equal(inner.calls, 2);
    const got = await callSource((call) => source.getUserById('1', call), patient, new AbortController().signal);
    assert.deepEqual(got, profile);
    assert.equal(inner.calls, 3, 'one call: the trial, once the circuit half-opened');
    assert.equal(source.circuitState, 'closed');
  });
});

describe('ResilientSource under concurrent calls', () => {
  it('30 calls at once without a signal: no MaxListenersExceededWarning on stderr (their shared signal holds a listener per call under way)', async () => {
    const demo = new DemoSource({ seed: 7, userCount: 1_000 });
    const source = new ResilientSource(demo, { timeoutMs: 5_000 });
    const ids = demoSample(demo, new Date()).tweetIds;
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const tweets = await Promise.all(Array.from({ length: 30 }, (_, i) => source.getTweet(ids[i % ids.length]!)));
      assert.equal(tweets.length, 30);
      // Node emits the warning on a later tick.
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message), []);
  });
});
