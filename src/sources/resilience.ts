// Retries, circuit breaking and timeouts for every data source, in one place, on cockatiel (a small,
// dependency-free, typed policy library: retry, circuit breaker, timeout with AbortSignal).
//
//  - ResilientSource wraps a DataSource (buildSource wraps every one). Each attempt runs behind a
//    circuit breaker and inside a timeout that aborts the attempt's AbortSignal, which the source
//    passes down to fetch / @atproto/api: the request it gives up on is cancelled, not abandoned.
//    Transient failures ('unavailable', 'timeout') are retried quickly; the breaker opens after
//    `failureThreshold` of them in a row, answers 'unavailable' at once while open, and after
//    `halfOpenAfterMs` lets one trial call through (success closes it, failure opens it again).
//    Other answers (not found, rate limited, rejected…) show the upstream is up: they neither count
//    against the breaker nor are retried.
//  - callSource: the patience of background jobs (crawl, watchlist batches) around such calls: longer
//    backoff, and a rate limit (or an open circuit) waited out until its reset when that is near enough.
//
// Both retry through withRetries below. Its waits run inside the attempt, on node:timers/promises
// with the call's signal, because cockatiel's own retry delay cannot be cancelled: a stopping job
// must not sit out a two-minute rate limit.
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  BrokenCircuitError,
  CircuitState,
  ConstantBackoff,
  ConsecutiveBreaker,
  IsolatedCircuitError,
  TaskCancelledError,
  TimeoutStrategy,
  circuitBreaker,
  handleWhen,
  retry,
  timeout,
  type CircuitBreakerPolicy,
  type TimeoutPolicy,
} from 'cockatiel';
import type { Community, SocialProfile, Tweet } from '../domain/models.js';
import {
  SourceError,
  silentLog,
  type CallOptions,
  type DataSource,
  type RetweetEdge,
  type SourceErrorKind,
  type SourceLog,
  type SourcePage,
  type TimelineQuery,
} from './types.js';

export interface RetryPolicy {
  /** Retries after the first attempt for 'unavailable' and 'timeout'. */
  retries: number;
  /** Backoff before retry n is random() × min(maxDelayMs, baseDelayMs × 2^(n-1)) (full jitter). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A rate limit whose reset is further away than this fails the call instead of waiting. */
  maxRateLimitWaitMs: number;
  /** How many rate-limit waits one call may do. */
  maxRateLimitWaits: number;
}

/** Background jobs: patient. */
export const defaultRetryPolicy: RetryPolicy = { retries: 3, baseDelayMs: 500, maxDelayMs: 10_000, maxRateLimitWaitMs: 120_000, maxRateLimitWaits: 5 };

/** API calls, with a client waiting: two quick retries, never a rate-limit wait (the client gets Retry-After). */
export const quickRetryPolicy: RetryPolicy = { retries: 2, baseDelayMs: 200, maxDelayMs: 5_000, maxRateLimitWaitMs: 0, maxRateLimitWaits: 0 };

// The signal of calls that have none (an API call's): every call under way adds a listener to it
// (removed when it ends), so past 10 concurrent calls Node warned of a leak there was not
// ("MaxListenersExceededWarning ... 11 abort listeners") on stderr: no limit on it.
const NEVER = new AbortController().signal;
setMaxListeners(0, NEVER);

const TRANSIENT: ReadonlySet<SourceErrorKind> = new Set(['unavailable', 'timeout']);

const isTransient = (err: unknown): boolean => err instanceof SourceError && TRANSIENT.has(err.kind);

function rateLimitWaitMs(err: SourceError): number {
  return Math.max(0, (err.resetAt?.getTime() ?? Date.now() + 1_000) - Date.now()) + 50;
}

export interface RetryEvent {
  attempt: number;
  delayMs: number;
  error: SourceError;
}

/** Runs `attempt` under `policy`; an abort of `signal` ends any wait at once and rejects with its reason. */
async function withRetries<T>(
  policy: RetryPolicy,
  attempt: (signal: AbortSignal) => Promise<T>,
  signal: AbortSignal | undefined,
  random: () => number,
  onRetry: (event: RetryEvent) => void,
): Promise<T> {
  let failures = 0;
  let waits = 0;
  let delayMs = 0;
  // cockatiel asks this once per failure: it decides, and sets the wait before the next attempt.
  const retryable = handleWhen((err) => {
    if (!(err instanceof SourceError)) return false;
    // A paused source (its circuit open) says when its trial call may go: waited out as a rate limit
    // is, by background jobs (a batch's items failed at once before); API calls do not wait (Retry-After).
    if (err.kind === 'rate_limited' || (err.kind === 'unavailable' && err.resetAt)) {
      const wait = rateLimitWaitMs(err) + (err.kind === 'unavailable' ? Math.floor(random() * 1_000) : 0);
      if (waits >= policy.maxRateLimitWaits || wait > policy.maxRateLimitWaitMs) return false;
      waits += 1;
      delayMs = wait;
    } else {
      if (!TRANSIENT.has(err.kind) || failures >= policy.retries) return false;
      failures += 1;
      delayMs = Math.floor(random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failures - 1)));
    }
    onRetry({ attempt: failures + waits, delayMs, error: err });
    return true;
  });
  const policyRun = retry(retryable, { maxAttempts: policy.retries + policy.maxRateLimitWaits, backoff: new ConstantBackoff(0) });
  try {
    return await policyRun.execute(async (ctx) => {
      if (delayMs > 0) await sleep(delayMs, undefined, { signal: ctx.signal });
      delayMs = 0;
      ctx.signal.throwIfAborted();
      return attempt(ctx.signal);
    }, signal);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw err;
  }
}

/**
 * A background job's call to the data source: retried under `policy` (rate limits waited out within
 * its bounds); `signal` (the job's) ends every wait and is passed to the call.
 */
export function callSource<T>(fn: (call: CallOptions) => Promise<T>, policy: RetryPolicy, signal: AbortSignal): Promise<T> {
  return withRetries(policy, (s) => fn({ signal: s }), signal, Math.random, () => {});
}

export interface ResilienceOptions {
  /**
   * Per attempt; default 10 000 ms. 0: none, for a source that answers in-process and cannot hang
   * (the plain demo): a timeout costs tens of µs a call on Node 20 (listeners on an AbortSignal),
   * more than such a source's whole answer.
   */
  timeoutMs?: number;
  /** Default quickRetryPolicy. */
  retry?: RetryPolicy;
  /** Transient failures in a row that open the circuit; default 5. */
  failureThreshold?: number;
  /** How long the circuit stays open before a trial call; default 30 000 ms. */
  halfOpenAfterMs?: number;
  /** How long a probe's answer (or a call that succeeded) stands for readiness; default 5 000 ms. */
  probeTtlMs?: number;
  log?: SourceLog;
  random?: () => number;
  /** Told about every retry (metrics, tests). */
  onRetry?: (event: RetryEvent & { operation: string }) => void;
}

export type CircuitStateName = 'closed' | 'open' | 'half_open' | 'isolated';

const STATE_NAMES: Record<CircuitState, CircuitStateName> = {
  [CircuitState.Closed]: 'closed',
  [CircuitState.Open]: 'open',
  [CircuitState.HalfOpen]: 'half_open',
  [CircuitState.Isolated]: 'isolated',
};

export class ResilientSource implements DataSource {
  readonly name: string;
  private readonly timeoutMs: number;
  private readonly halfOpenAfterMs: number;
  private readonly retryPolicy: RetryPolicy;
  private readonly probeTtlMs: number;
  private readonly log: SourceLog;
  private readonly random: () => number;
  private readonly onRetry: NonNullable<ResilienceOptions['onRetry']>;
  private readonly breaker: CircuitBreakerPolicy;
  private readonly attemptTimeout: TimeoutPolicy | undefined;
  private readonly probeTimeoutMs: number;
  private readonly probeTimeout: TimeoutPolicy;
  private lastSuccessAt = -Infinity;
  // When the circuit last opened: a call refused while it is open is told when the trial call may go.
  private openedAt = 0;
  private probed?: { at: number; error?: SourceError };
  private probing?: Promise<void>;

  constructor(
    private readonly inner: DataSource,
    options: ResilienceOptions = {},
  ) {
    this.name = inner.name;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.halfOpenAfterMs = options.halfOpenAfterMs ?? 30_000;
    this.retryPolicy = options.retry ?? quickRetryPolicy;
    this.probeTtlMs = options.probeTtlMs ?? 5_000;
    this.log = options.log ?? silentLog;
    this.random = options.random ?? Math.random;
    this.onRetry = options.onRetry ?? (() => {});
    this.breaker = circuitBreaker(handleWhen(isTransient), {
      halfOpenAfter: this.halfOpenAfterMs,
      breaker: new ConsecutiveBreaker(Math.max(1, Math.trunc(options.failureThreshold ?? 5))),
    });
    this.breaker.onStateChange((state) => {
      const line = { source: this.name, circuit: STATE_NAMES[state] };
      if (state === CircuitState.Open) this.openedAt = Date.now();
      if (state === CircuitState.Open) this.log.warn(line, `${this.name}: circuit open after repeated failures; calls are paused for ${this.halfOpenAfterMs} ms`);
      else this.log.info(line, `${this.name}: circuit ${STATE_NAMES[state]}`);
    });
    // abortOnReturn off: aborting a finished attempt's signal builds a DOMException (a stack trace) per call, for nothing.
    this.attemptTimeout = this.timeoutMs > 0 ? timeout(this.timeoutMs, { strategy: TimeoutStrategy.Aggressive, abortOnReturn: false }) : undefined;
    this.probeTimeoutMs = this.timeoutMs > 0 ? Math.min(this.timeoutMs, 3_000) : 3_000;
    this.probeTimeout = timeout(this.probeTimeoutMs, TimeoutStrategy.Aggressive);
  }

  get circuitState(): CircuitStateName {
    return STATE_NAMES[this.breaker.state];
  }

  getUserByUsername(username: string, call?: CallOptions): Promise<SocialProfile> {
    return this.run('getUserByUsername', (signal) => this.inner.getUserByUsername(username, { signal }), call);
  }

  getUserById(id: string, call?: CallOptions): Promise<SocialProfile> {
    return this.run('getUserById', (signal) => this.inner.getUserById(id, { signal }), call);
  }

  getTweet(id: string, call?: CallOptions): Promise<Tweet> {
    return this.run('getTweet', (signal) => this.inner.getTweet(id, { signal }), call);
  }

  getRetweeters(tweetId: string, page: { limit: number; after?: string }, call?: CallOptions): Promise<SourcePage<RetweetEdge>> {
    return this.run('getRetweeters', (signal) => this.inner.getRetweeters(tweetId, page, { signal }), call);
  }

  getUserTweets(userId: string, query: TimelineQuery, call?: CallOptions): Promise<SourcePage<Tweet>> {
    return this.run('getUserTweets', (signal) => this.inner.getUserTweets(userId, query, { signal }), call);
  }

  getCommunity(id: string, call?: CallOptions): Promise<Community> {
    return this.run('getCommunity', (signal) => this.inner.getCommunity(id, { signal }), call);
  }

  /**
   * Readiness: an open circuit is not ready; a call that succeeded or a probe within probeTtlMs
   * stands; otherwise the source's own probe is run (one at a time, within 3 s at most). An upstream
   * that rate-limits us is up.
   */
  async probe(call?: CallOptions): Promise<void> {
    const state = this.breaker.state;
    if (state === CircuitState.Open || state === CircuitState.Isolated) throw this.circuitOpenError();
    const now = Date.now();
    if (now - this.lastSuccessAt < this.probeTtlMs) return;
    if (this.probed && now - this.probed.at < this.probeTtlMs) {
      if (this.probed.error) throw this.probed.error;
      return;
    }
    const inner = this.inner;
    if (!inner.probe) return;
    this.probing ??= this.probeTimeout
      .execute(({ signal }) => inner.probe!({ signal }))
      .then(
        () => void (this.probed = { at: Date.now() }),
        (err: unknown) => {
          const error = this.translate(err, 'probe', undefined, this.probeTimeoutMs);
          if (!(error instanceof SourceError)) throw error;
          this.logFailure('probe', 1, error);
          this.probed = error.kind === 'rate_limited' ? { at: Date.now() } : { at: Date.now(), error };
        },
      )
      .finally(() => (this.probing = undefined));
    await this.probing;
    if (call?.signal?.aborted) throw call.signal.reason;
    if (this.probed?.error) throw this.probed.error;
  }

  private async run<T>(operation: string, fn: (signal: AbortSignal) => Promise<T>, call: CallOptions | undefined): Promise<T> {
    const outer = call?.signal;
    let attempt = 0;
    try {
      // No retries to make (the demo): the attempt alone, without the retry machinery's cost.
      const value =
        this.retryPolicy.retries === 0 && this.retryPolicy.maxRateLimitWaits === 0
          ? await this.attempt(operation, 1, fn, outer ?? NEVER)
          : await withRetries(
              this.retryPolicy,
              (signal) => {
                attempt += 1;
                return this.attempt(operation, attempt, fn, signal);
              },
              // Not left to cockatiel's own never-aborted signal, which is shared too and limited.
              outer ?? NEVER,
              this.random,
              (event) => this.onRetry({ ...event, operation }),
            );
      this.lastSuccessAt = Date.now();
      return value;
    } catch (err) {
      throw this.translate(err, operation, outer, this.timeoutMs);
    }
  }

  /** One attempt: behind the breaker, inside the timeout (which aborts `fn`'s signal when it fires). */
  private async attempt<T>(operation: string, n: number, fn: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
    const timed = this.attemptTimeout;
    try {
      return await this.breaker.execute(
        ({ signal: open }) =>
          timed
            ? timed.execute(({ signal: inner }) => fn(inner), open).catch((err: unknown) => {
                throw this.translate(err, operation, open, this.timeoutMs);
              })
            : fn(open),
        signal,
      );
    } catch (err) {
      if (err instanceof SourceError) this.logFailure(operation, n, err);
      throw err;
    }
  }

  /** Every failure at debug with what the upstream said; those an operator must fix also at warn. */
  private logFailure(operation: string, attempt: number, err: SourceError): void {
    const line = { source: this.name, operation, attempt, kind: err.kind, ...(err.upstream ? { upstream: err.upstream } : {}) };
    if (err.kind === 'rejected') this.log.warn(line, err.message);
    else this.log.debug(line, err.message);
  }

  private translate(err: unknown, operation: string, outer: AbortSignal | undefined, timeoutMs: number): unknown {
    if (outer?.aborted) return outer.reason;
    if (err instanceof BrokenCircuitError || err instanceof IsolatedCircuitError) return this.circuitOpenError();
    if (err instanceof TaskCancelledError) return new SourceError('timeout', `${this.name} did not answer ${operation} within ${timeoutMs} ms`);
    return err;
  }

  private circuitOpenError(): SourceError {
    // While the trial call runs (half-open), the next look is once it may have ended: its timeout.
    const trialEnd = this.breaker.state === CircuitState.HalfOpen ? Date.now() + (this.timeoutMs || 1_000) : 0;
    const resetAt = new Date(Math.max(Date.now() + 1, this.openedAt + this.halfOpenAfterMs, trialEnd));
    return new SourceError('unavailable', `circuit open: ${this.name} failed repeatedly; calls are paused for up to ${Math.ceil(this.halfOpenAfterMs / 1000)} s`, resetAt);
  }
}
