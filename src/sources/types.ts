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
  | 'bad_response'; // an answer we could not understand

export class SourceError extends Error {
  constructor(
    readonly kind: SourceErrorKind,
    message: string,
    readonly resetAt?: Date,
  ) {
    super(message);
    this.name = 'SourceError';
  }
}

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
  getUserByUsername(username: string): Promise<SocialProfile>;
  getUserById(id: string): Promise<SocialProfile>;
  getTweet(id: string): Promise<Tweet>;
  /** Users who retweeted the tweet, most recent retweet first. */
  getRetweeters(tweetId: string, page: { limit: number; after?: string }): Promise<SourcePage<RetweetEdge>>;
  /** The user's tweets, newest first (createdAt then id, descending). Throws 'protected' for protected accounts. */
  getUserTweets(userId: string, query: TimelineQuery): Promise<SourcePage<Tweet>>;
  getCommunity(id: string): Promise<Community>;
}
