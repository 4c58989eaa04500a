// X's own rate limits, tracked per endpoint template from x-rate-limit-{limit,remaining,reset}.
// Each call reserves one request of the budget before it goes out, so concurrent calls cannot
// overrun it; when the budget is spent and the window has not reset, a call either waits for the
// reset (when that is within maxWaitMs) or fails with 'rate_limited' without reaching X.
import { SourceError } from '../types.js';

export interface RateLimitTrackerOptions {
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

export function readRateLimitHeaders(headers: Headers): RateLimitHeaders {
  const int = (name: string): number | undefined => {
    const raw = headers.get(name);
    if (raw === null || raw.trim() === '') return undefined;
    const value = Number(raw);
    return Number.isFinite(value) && value >= 0 ? Math.trunc(value) : undefined;
  };
  const reset = int('x-rate-limit-reset');
  return { limit: int('x-rate-limit-limit'), remaining: int('x-rate-limit-remaining'), resetAtMs: reset === undefined ? undefined : reset * 1000 };
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RateLimitTracker {
  private readonly windows = new Map<string, RateLimitState>();
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly fallbackBlockMs: number;

  constructor(options: RateLimitTrackerOptions = {}) {
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
        throw new SourceError('rate_limited', `X's rate limit for ${key} is fully taken by requests in flight`);
      }
      const waitMs = state.resetAtMs - now;
      if (waitMs > maxWaitMs) {
        const resetAt = new Date(state.resetAtMs);
        throw new SourceError('rate_limited', `X's rate limit for ${key} is exhausted until ${resetAt.toISOString()}`, resetAt);
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
      // X's count may not include other requests still in flight: deduct them, to stay on the safe side.
      const fresh = Math.max(0, headers.remaining - state.inFlight);
      const sameWindow = state.resetAtMs === headers.resetAtMs && state.remaining !== undefined;
      state.remaining = sameWindow ? Math.min(state.remaining ?? fresh, fresh) : fresh;
      state.resetAtMs = headers.resetAtMs;
    }
    return undefined;
  }
}
