// Reads of profiles, tweets, retweeters, timelines and communities: served from the store while
// fresh (cached: true), else fetched from the data source and stored (cached: false).
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.js';
import type { Community, SocialProfile, Tweet } from '../domain/models.js';
import type { DataSource } from '../sources/types.js';
import type { Database } from '../db/schema.js';
import {
  findCommunity,
  findProfileByUsername,
  findProfiles,
  findTweets,
  getListCache,
  putListCache,
  upsertCommunity,
  upsertProfiles,
  upsertRetweets,
} from './social-repo.js';
import { throwAsAppError } from './source-errors.js';
import { filterKey, type TimelineFilters } from './timeline-filters.js';
import type { TweetLookup } from './tweet-lookup.js';
import type { TweetStore } from './tweet-store.js';

export interface Read<T> {
  value: T;
  cached: boolean;
}

/** A fresh stored tweet comes as the JSON text it was stored as (and its UTF-8 bytes beyond ASCII: StoredTweetJson); a fetched one as the object. */
export type TweetRead = { cached: true; json: string; utf8: Buffer | undefined } | { cached: false; value: Tweet };

export interface Page<T> {
  items: T[];
  /** The source's position of the next page; undefined at the end. */
  next: string | undefined;
  cached: boolean;
}

interface CachedRetweeters {
  users: Array<{ id: string; at: string | null }>;
  next?: string;
}
interface CachedTimeline {
  ids: string[];
  next?: string;
}

export class SocialService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly source: DataSource,
    private readonly tweets: TweetStore,
    private readonly cache: Config['cache'],
    private readonly now: () => number,
    private readonly lookup: TweetLookup,
  ) {}

  private fresh(fetchedAt: string, seconds: number): boolean {
    return this.freshAt(Date.parse(fetchedAt), seconds);
  }

  private freshAt(fetchedAtMs: number, seconds: number): boolean {
    return seconds > 0 && fetchedAtMs > this.now() - seconds * 1000;
  }

  private stamp(): string {
    return new Date(this.now()).toISOString();
  }

  async profileByUsername(username: string): Promise<Read<SocialProfile>> {
    const handle = username.toLowerCase();
    const stored = await findProfileByUsername(this.db, handle);
    if (stored && this.fresh(stored.fetchedAt, this.cache.profileSeconds)) return { value: stored.value, cached: true };
    const profile = await this.source.getUserByUsername(handle).catch((e) => throwAsAppError(e, 'user'));
    await upsertProfiles(this.db, [profile], this.stamp());
    return { value: profile, cached: false };
  }

  /**
   * The fast path, called from the tweet route only: a fresh stored tweet when it is known without
   * waiting (see TweetLookup.known), else undefined (then call tweet()).
   */
  freshTweet(id: string): TweetRead | undefined {
    const stored = this.lookup.known(id);
    return stored && this.freshAt(stored.fetchedAtMs, this.cache.tweetSeconds) ? { json: stored.json, utf8: stored.utf8, cached: true } : undefined;
  }

  async tweet(id: string): Promise<TweetRead> {
    const stored = await this.lookup.get(id);
    if (stored && this.freshAt(stored.fetchedAtMs, this.cache.tweetSeconds)) return { json: stored.json, utf8: stored.utf8, cached: true };
    return this.fetchTweet(id);
  }

  private async fetchTweet(id: string): Promise<TweetRead> {
    const tweet = await this.source.getTweet(id).catch((e) => throwAsAppError(e, 'tweet'));
    const stamp = this.stamp();
    // Fresh again even if nothing changed at the source (its stored copy was not answered as cached).
    await this.tweets.write([tweet], stamp, { touch: true });
    this.lookup.stored(id, JSON.stringify(tweet), Date.parse(stamp));
    return { value: tweet, cached: false };
  }

  async community(id: string): Promise<Read<Community>> {
    const stored = await findCommunity(this.db, id);
    if (stored && this.fresh(stored.fetchedAt, this.cache.communitySeconds)) return { value: stored.value, cached: true };
    const community = await this.source.getCommunity(id).catch((e) => throwAsAppError(e, 'community'));
    await upsertCommunity(this.db, community, this.stamp());
    return { value: community, cached: false };
  }

  async retweeters(tweetId: string, limit: number, after: string | undefined): Promise<Page<SocialProfile>> {
    const key = `rt:${tweetId}:${limit}:${after ?? ''}`;
    const hit = await getListCache<CachedRetweeters>(this.db, key);
    if (hit && this.fresh(hit.fetchedAt, this.cache.listSeconds)) {
      const profiles = await findProfiles(this.db, hit.value.users.map((u) => u.id));
      if (profiles.size === new Set(hit.value.users.map((u) => u.id)).size) {
        return { items: hit.value.users.map((u) => profiles.get(u.id)!), next: hit.value.next, cached: true };
      }
    }
    const page = await this.source.getRetweeters(tweetId, { limit, ...(after ? { after } : {}) }).catch((e) => throwAsAppError(e, 'tweet'));
    const stamp = this.stamp();
    await upsertProfiles(this.db, page.items.map((e) => e.user), stamp);
    await upsertRetweets(this.db, tweetId, page.items.map((e) => ({ userId: e.user.id, retweetedAt: e.retweetedAt })));
    const value: CachedRetweeters = { users: page.items.map((e) => ({ id: e.user.id, at: e.retweetedAt })), ...(page.next ? { next: page.next } : {}) };
    await putListCache(this.db, key, value, stamp);
    return { items: page.items.map((e) => e.user), next: page.next, cached: false };
  }

  async userTweets(userId: string, limit: number, after: string | undefined, filters: TimelineFilters = {}): Promise<Page<Tweet>> {
    // A filtered list is another list: its pages are kept under a key of their own.
    const f = filterKey(filters);
    const key = f === '' ? `tl:${userId}:${limit}:${after ?? ''}` : `tlf:${userId}:${limit}:${f}:${after ?? ''}`;
    const hit = await getListCache<CachedTimeline>(this.db, key);
    if (hit && this.fresh(hit.fetchedAt, this.cache.listSeconds)) {
      const tweets = await findTweets(this.db, hit.value.ids);
      if (tweets.size === new Set(hit.value.ids).size) return { items: hit.value.ids.map((id) => tweets.get(id)!), next: hit.value.next, cached: true };
    }
    const page = await this.source.getUserTweets(userId, { limit, ...filters, ...(after ? { after } : {}) }).catch((e) => throwAsAppError(e, 'user'));
    const stamp = this.stamp();
    await this.tweets.write(page.items, stamp);
    await putListCache(this.db, key, { ids: page.items.map((t) => t.id), ...(page.next ? { next: page.next } : {}) } satisfies CachedTimeline, stamp);
    return { items: page.items, next: page.next, cached: false };
  }
}
