// An upstream's own rate limits, tracked per key (X: per endpoint template, from
// x-rate-limit-{limit,remaining,reset}; Bluesky: one key for the AppView, from
// ratelimit-{limit,remaining,reset}). Each call reserves one request of the budget before it goes
// out, so concurrent calls cannot overrun it; when the budget is spent and the window has not reset,
// a call either waits for the reset (when that is within maxWaitMs) or fails with 'rate_limited'
// without reaching the upstream. A 429 spends the budget until its reset.
import { SourceError } from './types.js';

export interface RateLimitTrackerOptions {
  /** Names the upstream in messages, e.g. "X" or "The Bluesky AppView". Default "The data source". */
  label?: string;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** How long to assume the limit lasts after a 429 that says nothing about its reset. Default 60 s. */
  fallbackBlockMs?: number;
}

/** What one response said about the endpoint's window. */
export interface RateLimitHeaders {
  limit?: number;
  remaining?: number;
  /** Epoch milliseconds. */
  resetAtMs?: number;
}

export interface RateLimitState {
  limit?: number;
  /** Our estimate of requests left in the window, reservations of calls in flight deducted; undefined: unknown. */
  remaining?: number;
  /** Epoch milliseconds; undefined: unknown. */
  resetAtMs?: number;
  inFlight: number;
}

/** Response headers as fetch gives them, or as a plain record (@atproto/api). */
export type HeaderBag = Headers | Record<string, string | undefined> | undefined;

function header(headers: HeaderBag, name: string): string | undefined {
  if (headers === undefined) return undefined;
  // Any fetch's Headers (Node's or undici's from npm, outbound-fetch.ts): not instanceof one class.
  if (typeof headers.get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | undefined>;
  return record[name] ?? Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
}

/**
 * `<prefix>limit`, `<prefix>remaining` and `<prefix>reset` (X: prefix "x-rate-limit-", Bluesky:
 * "ratelimit-"). A reset above 10^9 is epoch seconds; a smaller one, seconds from `now`.
 */
export function readRateLimitHeaders(headers: HeaderBag, prefix = 'x-rate-limit-', now = Date.now()): RateLimitHeaders {
  const int = (name: string): number | undefined => {
    const raw = header(headers, name);
    if (raw === undefined || raw.trim() === '') return undefined;
    const value = Number(raw);
    return Number.isFinite(value) && value >= 0 ? Math.trunc(value) : undefined;
  };
  const reset = int(`${prefix}reset`);
  const resetAtMs = reset === undefined ? undefined : reset > 1e9 ? reset * 1000 : now + reset * 1000;
  return { limit: int(`${prefix}limit`), remaining: int(`${prefix}remaining`), resetAtMs };
}

/** When a refused call may be made again: the rate-limit reset header, else `retry-after` (seconds). */
export function resetAtFromHeaders(headers: HeaderBag, prefix: string, now: number): Date | undefined {
  const reset = readRateLimitHeaders(headers, prefix, now).resetAtMs;
  if (reset !== undefined && reset > 0) return new Date(reset);
  const retryAfter = Number(header(headers, 'retry-after') ?? Number.NaN);
  if (Number.isFinite(retryAfter) && retryAfter >= 0) return new Date(now + retryAfter * 1000);
  return undefined;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RateLimitTracker {
  private readonly windows = new Map<string, RateLimitState>();
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly fallbackBlockMs: number;
  private readonly label: string;

  constructor(options: RateLimitTrackerOptions = {}) {
    this.label = options.label ?? 'The data source';
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? defaultSleep;
    this.fallbackBlockMs = options.fallbackBlockMs ?? 60_000;
  }

  /** A copy of what is known about `key` (for tests and metrics). */
  state(key: string): RateLimitState | undefined {
    const state = this.windows.get(key);
    return state ? { ...state } : undefined;
  }

  private window(key: string): RateLimitState {
    let state = this.windows.get(key);
    if (!state) {
      state = { inFlight: 0 };
      this.windows.set(key, state);
    }
    return state;
  }

  /**
   * Reserves one request on `key`. Waits for the window's reset when it is at most `maxWaitMs` away;
   * otherwise throws SourceError('rate_limited') with the reset instant. Pair with settle().
   */
  async acquire(key: string, maxWaitMs: number): Promise<void> {
    for (;;) {
      const state = this.window(key);
      const now = this.now();
      if (state.resetAtMs !== undefined && state.resetAtMs <= now) {
        // The window has rolled over: the full limit again when we know it, else unknown.
        state.remaining = state.limit;
        state.resetAtMs = undefined;
      }
      if (state.remaining === undefined || state.remaining > 0) {
        if (state.remaining !== undefined) state.remaining -= 1;
        state.inFlight += 1;
        return;
      }
      if (state.resetAtMs === undefined) {
        // A fresh window's whole budget is already reserved by calls in flight.
        throw new SourceError('rate_limited', `${this.label}'s rate limit for ${key} is fully taken by requests in flight`);
      }
      const waitMs = state.resetAtMs - now;
      if (waitMs > maxWaitMs) {
        const resetAt = new Date(state.resetAtMs);
        throw new SourceError('rate_limited', `${this.label}'s rate limit for ${key} is exhausted until ${resetAt.toISOString()}; calls are held back until then`, resetAt);
      }
      await this.sleep(waitMs);
    }
  }

  /**
   * Records the answer to a reserved request: its status (undefined when none came) and headers.
   * Returns the reset instant when the answer was a 429.
   */
  settle(key: string, status: number | undefined, headers: RateLimitHeaders = {}): Date | undefined {
    const state = this.window(key);
    state.inFlight = Math.max(0, state.inFlight - 1);
    const now = this.now();
    if (headers.limit !== undefined) state.limit = headers.limit;

    if (status === 429) {
      const resetAtMs = headers.resetAtMs !== undefined && headers.resetAtMs > now ? headers.resetAtMs : now + this.fallbackBlockMs;
      state.remaining = 0;
      state.resetAtMs = Math.max(resetAtMs, state.resetAtMs ?? 0);
      return new Date(resetAtMs);
    }

    if (headers.remaining !== undefined && headers.resetAtMs !== undefined && headers.resetAtMs > now) {
      // The upstream's count may not include other requests still in flight: deduct them, to stay on the safe side.
      const fresh = Math.max(0, headers.remaining - state.inFlight);
      const sameWindow = state.resetAtMs === headers.resetAtMs && state.remaining !== undefined;
      state.remaining = sameWindow ? Math.min(state.remaining ?? fresh, fresh) : fresh;
      state.resetAtMs = headers.resetAtMs;
    }
    return undefined;
  }
}
