// Simulated upstream conditions around any data source, for tests, demos and benchmarks: a fixed
// latency, random faults ('unavailable') and a per-minute rate limit ('rate_limited' with resetAt,
// fixed one-minute windows like an upstream API's).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Community, SocialProfile, Tweet } from '../domain/models.js';
import { type CallOptions, type DataSource, type RetweetEdge, SourceError, type SourcePage, type TimelineQuery } from './types.js';

export interface SimulatedConditionsOptions {
  /** Added before each call answers. Default 0. */
  latencyMs?: number;
  /** Share of calls (0..1) that fail with SourceError('unavailable'). Default 0. */
  faultRate?: number;
  /** Calls allowed per one-minute window; beyond, SourceError('rate_limited'). 0 or unset: no limit. */
  rateLimitPerMinute?: number;
  /** Source of randomness for faults, in [0, 1). Default Math.random. */
  random?: () => number;
  /** The clock of the rate-limit windows. Default: the wall clock. */
  now?: () => Date;
}

const WINDOW_MS = 60_000;

export class SimulatedConditions implements DataSource {
  readonly name: string;
  private readonly latencyMs: number;
  private readonly faultRate: number;
  private readonly limit: number;
  private readonly random: () => number;
  private readonly clock: () => Date;
  private windowStart = -1;
  private used = 0;

  constructor(
    private readonly inner: DataSource,
    options: SimulatedConditionsOptions = {},
  ) {
    this.name = inner.name;
    this.latencyMs = Math.max(0, options.latencyMs ?? 0);
    this.faultRate = Math.min(1, Math.max(0, options.faultRate ?? 0));
    this.limit = Math.max(0, Math.floor(options.rateLimitPerMinute ?? 0));
    this.random = options.random ?? Math.random;
    this.clock = options.now ?? (() => new Date());
  }

  private async conditions(call: CallOptions | undefined): Promise<void> {
    if (this.limit > 0) {
      const now = this.clock().getTime();
      const window = Math.floor(now / WINDOW_MS) * WINDOW_MS;
      if (window !== this.windowStart) {
        this.windowStart = window;
        this.used = 0;
      }
      if (this.used >= this.limit) {
        throw new SourceError('rate_limited', `Simulated rate limit of ${this.limit} calls a minute reached.`, new Date(window + WINDOW_MS));
      }
      this.used++;
    }
    // The latency ends early when the call is aborted (a timeout), as a real request would.
    if (this.latencyMs > 0) await sleep(this.latencyMs, undefined, call?.signal ? { signal: call.signal } : {});
    if (this.faultRate > 0 && this.random() < this.faultRate) {
      throw new SourceError('unavailable', 'Simulated upstream failure.');
    }
  }

  async getUserByUsername(username: string, call?: CallOptions): Promise<SocialProfile> {
    await this.conditions(call);
    return this.inner.getUserByUsername(username, call);
  }

  async getUserById(id: string, call?: CallOptions): Promise<SocialProfile> {
    await this.conditions(call);
    return this.inner.getUserById(id, call);
  }

  async getTweet(id: string, call?: CallOptions): Promise<Tweet> {
    await this.conditions(call);
    return this.inner.getTweet(id, call);
  }

  async getRetweeters(tweetId: string, page: { limit: number; after?: string }, call?: CallOptions): Promise<SourcePage<RetweetEdge>> {
    await this.conditions(call);
    return this.inner.getRetweeters(tweetId, page, call);
  }

  async getUserTweets(userId: string, query: TimelineQuery, call?: CallOptions): Promise<SourcePage<Tweet>> {
    await this.conditions(call);
    return this.inner.getUserTweets(userId, query, call);
  }

  async getCommunity(id: string, call?: CallOptions): Promise<Community> {
    await this.conditions(call);
    return this.inner.getCommunity(id, call);
  }
}
