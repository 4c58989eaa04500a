// Token buckets: capacity = requests per minute (the burst), refilled evenly. A keyed request draws
// from its account's bucket; the interface takes several at once (a request passes only if every
// bucket has a token, and then takes one from each, so a refused request spends nothing anywhere).
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one request is allowed (0 when allowed). */
  retryAfterSeconds: number;
}

export interface BucketSpec {
  key: string;
  perMinute: number;
}

/** At least one bucket: a decision reports one bucket's numbers, and none would leave nothing to report. */
export type BucketSpecs = readonly [BucketSpec, ...BucketSpec[]];

/** The decision over several buckets: `refused` is the index of the first bucket that had no token. */
export interface MultiDecision extends RateDecision {
  refused: number | undefined;
}

export interface RateLimiter {
  take(key: string, perMinute: number): Promise<RateDecision> | RateDecision;
  /** Draws from every bucket or from none, in one step (one round trip on a shared backend). */
  takeAll(buckets: BucketSpecs): Promise<MultiDecision> | MultiDecision;
  /** Readiness: throws when the shared backend cannot be reached. */
  ping?(): Promise<void>;
  /** A shared backend: who hears that it became unreachable (calls are then limited in the process) or reachable again. */
  onHealthChange?(handler: (reachable: boolean, err?: Error) => void): void;
  /** A shared backend: where its decisions were made (read by /metrics). */
  readonly stats?: RateLimitStats;
  close?(): Promise<void>;
}

/** What a shared rate limiter did in this process, as plain numbers (see watchRateLimiter in src/http/metrics.ts). */
export interface RateLimitStats {
  /** Requests decided, by where: from this process's lease, in Redis, or in the process while Redis is down. */
  decided: { lease: number; redis: number; local: number };
  /** Script calls made to Redis. */
  calls: number;
  /** Tokens leased to this process. */
  leasedTokens: number;
}

interface Bucket {
  tokens: number;
  at: number;
  /** Its size (per minute) when made: a bucket that has refilled to it holds no information. */
  per: number;
}

/**
 * Combines per-bucket token counts (after the take, if allowed): a refusal reports the first bucket
 * without a token; an allowed request reports the bucket with the fewest tokens left, the one that
 * will bind first.
 */
export function combine(buckets: BucketSpecs, tokens: number[], allowed: boolean): MultiDecision {
  let pick = 0;
  let refused: number | undefined;
  if (!allowed) {
    refused = tokens.findIndex((t) => t < 1);
    pick = Math.max(0, refused);
  } else {
    for (let i = 1; i < tokens.length; i++) if (tokens[i]! / buckets[i]!.perMinute < tokens[pick]! / buckets[pick]!.perMinute) pick = i;
  }
  // The picked bucket's numbers for the RateLimit-* headers and Retry-After, built in one literal
  // (every request comes here): spreading a per-bucket decision into it cost about 4% of the echo's
  // CPU in a profile.
  const perMinute = buckets[pick]!.perMinute;
  const left = tokens[pick]!;
  const perSecond = perMinute / 60;
  return {
    allowed,
    limit: perMinute,
    remaining: Math.floor(left),
    resetSeconds: Math.ceil((perMinute - left) / perSecond),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - left) / perSecond)),
    refused,
  };
}

/** Buckets kept at most (see evict). */
const MAX_BUCKETS = 100_000;

export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private nextEviction = 0;
  constructor(private readonly now: () => number = Date.now) {}

  take(key: string, perMinute: number): RateDecision {
    return this.takeAll([{ key, perMinute }]);
  }

  takeAll(specs: BucketSpecs): MultiDecision {
    const now = this.now();
    // Every request runs this: plain loops, and a Map write only for a new bucket.
    const bs: Bucket[] = [];
    let allowed = true;
    for (const s of specs) {
      let b = this.buckets.get(s.key);
      if (!b) this.buckets.set(s.key, (b = { tokens: s.perMinute, at: now, per: s.perMinute }));
      b.tokens = Math.min(s.perMinute, b.tokens + (now - b.at) * (s.perMinute / 60_000));
      b.at = now;
      if (b.tokens < 1) allowed = false;
      bs.push(b);
    }
    const tokens: number[] = [];
    for (const b of bs) tokens.push(allowed ? (b.tokens -= 1) : b.tokens);
    if (this.buckets.size > MAX_BUCKETS && now >= this.nextEviction) this.evict(now);
    return combine(specs, tokens, allowed);
  }

  /**
   * A bucket that has refilled (idle for a minute at most) holds no information: dropping it bounds
   * memory and changes no decision. At most once a second (it reads every bucket: run on every call
   * once 100,000 were in use within a minute, it cost every request that scan). If that is not
   * enough, the fullest go: dropping a bucket refills it, which changes least for those nearest full
   * (a flood of new addresses' buckets, one token spent), not the spent bucket of a busy account.
   */
  private evict(now: number): void {
    this.nextEviction = now + 1_000;
    const fill = (b: Bucket) => Math.min(1, (b.tokens + (now - b.at) * (b.per / 60_000)) / b.per);
    for (const [k, b] of this.buckets) if (fill(b) >= 1) this.buckets.delete(k);
    const over = this.buckets.size - MAX_BUCKETS;
    if (over <= 0) return;
    const fullest = [...this.buckets].map(([k, b]) => [k, fill(b)] as const).sort((x, y) => y[1] - x[1]);
    for (let i = 0; i < over; i++) this.buckets.delete(fullest[i]![0]);
  }
}
