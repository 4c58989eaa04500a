// Per-key token buckets: capacity = the plan's requests per minute (the burst), refilled evenly.
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one request is allowed (0 when allowed). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  take(key: string, perMinute: number): Promise<RateDecision> | RateDecision;
  /** Readiness: throws when the shared backend cannot be reached. */
  ping?(): Promise<void>;
  close?(): Promise<void>;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  constructor(private readonly now: () => number = Date.now) {}

  take(key: string, perMinute: number): RateDecision {
    const now = this.now();
    const rate = perMinute / 60_000; // tokens per ms
    const b = this.buckets.get(key) ?? { tokens: perMinute, at: now };
    b.tokens = Math.min(perMinute, b.tokens + (now - b.at) * rate);
    b.at = now;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.buckets.set(key, b);
    if (this.buckets.size > 100_000) this.evictIdle(now);
    return {
      allowed,
      limit: perMinute,
      remaining: Math.floor(b.tokens),
      resetSeconds: Math.ceil((perMinute - b.tokens) / rate / 1000),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / rate / 1000)),
    };
  }

  // A bucket idle for a minute is full again and holds no information: dropping it bounds memory.
  private evictIdle(now: number): void {
    for (const [k, b] of this.buckets) if (now - b.at > 60_000) this.buckets.delete(k);
  }
}
