// Resilience for any DataSource: a timeout per attempt, retries with full-jitter exponential backoff
// for transient failures ('unavailable', 'timeout'; all calls are idempotent reads), and a circuit
// breaker that stops calling an upstream that keeps failing.
//
// Breaker: closed → open after `failureThreshold` consecutive failed attempts; open rejects at once
// with SourceError('unavailable', 'circuit open') for `cooldownMs`; then half-open lets one trial call
// through: success closes it, failure opens it again. Answers that prove the upstream is up
// (not_found, protected, suspended, bad_response) count as successes; rate_limited counts as neither.
import type { Community, SocialProfile, Tweet } from '../domain/models.js';
import { SourceError, type DataSource, type RetweetEdge, type SourcePage, type TimelineQuery } from './types.js';

export type CircuitState = 'closed' | 'open' | 'half_open';

export type ResilienceEvent =
  | { type: 'retry'; operation: string; attempt: number; delayMs: number; error: SourceError }
  | { type: 'circuit'; state: CircuitState };

export interface ResilienceOptions {
  /** Per attempt; default 15 000 ms. */
  timeoutMs?: number;
  /** Attempts per call, first included; default 3. */
  maxAttempts?: number;
  /** Backoff before retry n is random() × min(maxDelayMs, baseDelayMs × 2^(n-1)); defaults 200 and 5 000 ms. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Consecutive failed attempts that open the circuit; default 5. */
  failureThreshold?: number;
  /** How long the circuit stays open before a trial; default 30 000 ms. */
  cooldownMs?: number;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** Told about retries and circuit changes (logs, metrics). */
  onEvent?: (event: ResilienceEvent) => void;
}

type Outcome = 'success' | 'failure' | 'neutral';

const RETRYABLE: ReadonlySet<string> = new Set(['unavailable', 'timeout']);

function outcomeOf(err: unknown): Outcome {
  if (!(err instanceof SourceError)) return 'neutral'; // our own bug, not the upstream's health
  if (RETRYABLE.has(err.kind)) return 'failure';
  return err.kind === 'rate_limited' ? 'neutral' : 'success';
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The circuit breaker on its own, so its states can be reasoned about apart from retries. */
export class CircuitBreaker {
  private state: CircuitState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private trialInFlight = false;

  constructor(
    private readonly threshold: number,
    private readonly cooldownMs: number,
    private readonly now: () => number,
    private readonly onChange: (state: CircuitState) => void = () => {},
  ) {}

  get current(): CircuitState {
    if (this.state === 'open' && this.now() - this.openedAt >= this.cooldownMs) return 'half_open';
    return this.state;
  }

  /** Lets an attempt through or throws 'circuit open'. Returns whether the attempt is the half-open trial. */
  admit(sourceName: string): boolean {
    if (this.state === 'open') {
      if (this.now() - this.openedAt < this.cooldownMs) throw this.openError(sourceName);
      this.move('half_open');
    }
    if (this.state === 'half_open') {
      if (this.trialInFlight) throw this.openError(sourceName);
      this.trialInFlight = true;
      return true;
    }
    return false;
  }

  record(outcome: Outcome, trial: boolean): void {
    if (trial) this.trialInFlight = false;
    if (outcome === 'neutral') return;
    if (outcome === 'success') {
      this.failures = 0;
      if (this.state !== 'closed') this.move('closed');
      return;
    }
    this.failures += 1;
    if (this.state === 'half_open' || (this.state === 'closed' && this.failures >= this.threshold)) {
      this.openedAt = this.now();
      this.move('open');
    }
  }

  private move(state: CircuitState): void {
    if (state === this.state) return;
    this.state = state;
    this.onChange(state);
  }

  private openError(sourceName: string): SourceError {
    return new SourceError('unavailable', `circuit open: ${sourceName} failed repeatedly; calls are paused`);
  }
}

export class ResilientSource implements DataSource {
  readonly name: string;
  private readonly timeoutMs: number;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly random: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly onEvent: (event: ResilienceEvent) => void;
  private readonly breaker: CircuitBreaker;

  constructor(
    private readonly inner: DataSource,
    options: ResilienceOptions = {},
  ) {
    this.name = inner.name;
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.maxAttempts = Math.max(1, Math.trunc(options.maxAttempts ?? 3));
    this.baseDelayMs = options.baseDelayMs ?? 200;
    this.maxDelayMs = options.maxDelayMs ?? 5_000;
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? defaultSleep;
    this.onEvent = options.onEvent ?? (() => {});
    this.breaker = new CircuitBreaker(
      Math.max(1, Math.trunc(options.failureThreshold ?? 5)),
      options.cooldownMs ?? 30_000,
      options.now ?? Date.now,
      (state) => this.onEvent({ type: 'circuit', state }),
    );
  }

  get circuitState(): CircuitState {
    return this.breaker.current;
  }

  getUserByUsername(username: string): Promise<SocialProfile> {
    return this.run('getUserByUsername', () => this.inner.getUserByUsername(username));
  }

  getUserById(id: string): Promise<SocialProfile> {
    return this.run('getUserById', () => this.inner.getUserById(id));
  }

  getTweet(id: string): Promise<Tweet> {
    return this.run('getTweet', () => this.inner.getTweet(id));
  }

  getRetweeters(tweetId: string, page: { limit: number; after?: string }): Promise<SourcePage<RetweetEdge>> {
    return this.run('getRetweeters', () => this.inner.getRetweeters(tweetId, page));
  }

  getUserTweets(userId: string, query: TimelineQuery): Promise<SourcePage<Tweet>> {
    return this.run('getUserTweets', () => this.inner.getUserTweets(userId, query));
  }

  getCommunity(id: string): Promise<Community> {
    return this.run('getCommunity', () => this.inner.getCommunity(id));
  }

  private async run<T>(operation: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      const trial = this.breaker.admit(this.name);
      let result: T;
      try {
        result = await this.withTimeout(operation, call);
      } catch (err) {
        const outcome = outcomeOf(err);
        this.breaker.record(outcome, trial);
        const retry = outcome === 'failure' && attempt < this.maxAttempts && this.breaker.current === 'closed';
        if (!retry || !(err instanceof SourceError)) throw err;
        const delayMs = Math.floor(this.random() * Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempt - 1)));
        this.onEvent({ type: 'retry', operation, attempt, delayMs, error: err });
        await this.sleep(delayMs);
        continue;
      }
      this.breaker.record('success', trial);
      return result;
    }
  }

  private withTimeout<T>(operation: string, call: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new SourceError('timeout', `${this.name} did not answer ${operation} within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      let pending: Promise<T>;
      try {
        pending = call();
      } catch (err) {
        clearTimeout(timer);
        reject(err);
        return;
      }
      pending.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  }
}
