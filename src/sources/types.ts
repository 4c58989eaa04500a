// The data-source interface: every network (demo, X, Bluesky) is reached through it, so the
// gateway's routes, store and crawl never know which one is configured.
import type { Community, SocialProfile, Tweet } from '../domain/models.js';

export type SourceErrorKind =
  | 'not_found' // the user, tweet or community does not exist
  | 'protected' // the account is protected: its tweets are not visible
  | 'suspended' // the account is suspended
  | 'rate_limited' // the upstream's own rate limit; resetAt says when it lifts
  | 'unavailable' // the upstream answered with a failure or could not be reached
  | 'timeout' // no answer in time
  | 'bad_response' // an answer we could not understand
  | 'rejected'; // the upstream refused our request for a reason the operator must fix (credentials, plan, a parameter): never retried

/** What the upstream itself said, for the logs (never for clients): its status and the start of its body, or the network error. */
export interface UpstreamCause {
  status?: number;
  body?: string;
  error?: string;
  /** The request parameters the upstream named as refused. */
  parameters?: string[];
}

export class SourceError extends Error {
  constructor(
    readonly kind: SourceErrorKind,
    message: string,
    readonly resetAt?: Date,
    readonly upstream?: UpstreamCause,
  ) {
    super(message);
    this.name = 'SourceError';
  }
}

/** Per call: `signal` aborts the call (a timeout, a stopping job); sources pass it down to every request they make. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Where sources write what an operator may need: pino's logger fits. */
export interface SourceLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export const silentLog: SourceLog = { debug: () => {}, info: () => {}, warn: () => {} };

/** One page of a list read from a source. `next` is the source's own opaque position, absent at the end. */
export interface SourcePage<T> {
  items: T[];
  next?: string;
}

export interface RetweetEdge {
  user: SocialProfile;
  /** When the retweet happened, ISO 8601; null when the source does not say. */
  retweetedAt: string | null;
}

export interface TimelineQuery {
  /** 1..100 */
  limit: number;
  /** A `next` from a previous page of the same query. */
  after?: string;
  /** Only tweets with an id greater than this (tweet ids are time-ordered). */
  sinceId?: string;
  /** Only tweets with an id less than this. */
  untilId?: string;
  /** Only tweets created at or after this instant. */
  startTime?: Date;
  /** Only tweets created before this instant. */
  endTime?: Date;
}

export interface DataSource {
  /** 'demo' | 'x' | 'bluesky' */
  readonly name: string;
  getUserByUsername(username: string, call?: CallOptions): Promise<SocialProfile>;
  getUserById(id: string, call?: CallOptions): Promise<SocialProfile>;
  getTweet(id: string, call?: CallOptions): Promise<Tweet>;
  /** Users who retweeted the tweet, most recent retweet first. */
  getRetweeters(tweetId: string, page: { limit: number; after?: string }, call?: CallOptions): Promise<SourcePage<RetweetEdge>>;
  /** The user's tweets, newest first (createdAt then id, descending). Throws 'protected' for protected accounts. */
  getUserTweets(userId: string, query: TimelineQuery, call?: CallOptions): Promise<SourcePage<Tweet>>;
  getCommunity(id: string, call?: CallOptions): Promise<Community>;
  /**
   * A cheap request that shows the upstream can be reached and accepts us (for /readyz); throws the
   * SourceError that says why not. Sources without an upstream leave it out.
   */
  probe?(call?: CallOptions): Promise<void>;
}
