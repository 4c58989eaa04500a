// Simulated upstream conditions around any data source, for tests, demos and benchmarks: a fixed
// latency, random faults ('unavailable') and a per-minute rate limit ('rate_limited' with resetAt,
// fixed one-minute windows like an upstream API's).
import type { Community, SocialProfile, Tweet } from '../domain/models.js';
import { type DataSource, type RetweetEdge, SourceError, type SourcePage, type TimelineQuery } from './types.js';

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

  private async conditions(): Promise<void> {
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
    if (this.latencyMs > 0) await new Promise<void>((resolve) => setTimeout(resolve, this.latencyMs));
    if (this.faultRate > 0 && this.random() < this.faultRate) {
      throw new SourceError('unavailable', 'Simulated upstream failure.');
    }
  }

  async getUserByUsername(username: string): Promise<SocialProfile> {
    await this.conditions();
    return this.inner.getUserByUsername(username);
  }

  async getUserById(id: string): Promise<SocialProfile> {
    await this.conditions();
    return this.inner.getUserById(id);
  }

  async getTweet(id: string): Promise<Tweet> {
    await this.conditions();
    return this.inner.getTweet(id);
  }

  async getRetweeters(tweetId: string, page: { limit: number; after?: string }): Promise<SourcePage<RetweetEdge>> {
    await this.conditions();
    return this.inner.getRetweeters(tweetId, page);
  }

  async getUserTweets(userId: string, query: TimelineQuery): Promise<SourcePage<Tweet>> {
    await this.conditions();
    return this.inner.getUserTweets(userId, query);
  }

  async getCommunity(id: string): Promise<Community> {
    await this.conditions();
    return this.inner.getCommunity(id);
  }
}
