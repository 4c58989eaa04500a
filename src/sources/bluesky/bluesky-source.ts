// The Bluesky data source (SOURCE=bluesky): unauthenticated public reads from an AppView
// (BLUESKY_APPVIEW_URL, default https://public.api.bsky.app) through @atproto/api.
//
//   getUserByUsername  app.bsky.actor.getProfile (handle)
//   getUserById        app.bsky.actor.getProfile (the DID the id was assigned to)
//   getTweet           app.bsky.feed.getPosts (the URI the id was assigned to)
//   getRetweeters      app.bsky.feed.getRepostedBy, then app.bsky.actor.getProfiles for full profiles
//   getUserTweets      app.bsky.feed.getAuthorFeed (filter posts_with_replies)
//   getCommunity       always not_found: Bluesky has no communities (feeds, lists and starter packs are
//                      not the same thing, and no mapping of them would be faithful)
//
// Decisions:
// - Ids: numeric ids are minted for DIDs and post URIs and kept in the store (ids.ts, id-map.ts). An
//   id the gateway never assigned is not_found.
// - Timelines hold the author's own posts and replies. Reposts are left out: a repost is not a post
//   (it has no text of its own), X-style retweet copies would need ids of their own that getTweet
//   could not read back from the AppView, and leaving them out keeps "the user's tweets" authored by
//   the user. retweetedTweetId is therefore always null. Pinned posts are not requested.
// - createdAt is the post's sort time, the earlier of its record's createdAt and when the AppView
//   indexed it (map.ts): that is how the AppView orders feeds, so "newest first" holds.
// - Protected: an account with the self-label "!no-unauthenticated" asks apps not to show it to
//   logged-out readers (the AppView still serves its posts; its apps hide them). The gateway reads
//   as nobody in particular, so it honours the request: the profile is `protected: true`, and its
//   timeline and its posts are 'protected' (403 protected_account), as X's protected accounts are.
// - Taken-down accounts are 'suspended'; deactivated and missing ones 'not_found'.
// - retweetedAt is null: the AppView does not say when a repost happened (the list is, however, most
//   recent repost first).
// - Timeouts are the resilience layer's (../resilience.ts): the signal it passes aborts every request
//   of the call. The AppView's rate limit (per client address, ratelimit-* headers) is tracked as X's
//   is: after a 429 no call reaches the AppView before its reset.
import { Agent, type AppBskyActorDefs, type AppBskyFeedDefs } from '@atproto/api';
import type { Community, SocialProfile, Tweet } from '../../domain/models.js';
import { RateLimitTracker, readRateLimitHeaders, resetAtFromHeaders, type HeaderBag } from '../rate-limits.js';
import { SourceError, type CallOptions, type DataSource, type RetweetEdge, type SourcePage, type TimelineQuery } from '../types.js';
import { toSourceError } from './errors.js';
import type { IdMap } from './id-map.js';
import { compareIds, postIdMs } from './ids.js';
import { isHandle, isNoUnauthenticated, mapPost, mapProfile, postSortMs, Refs, type ProfileLike } from './map.js';
import { decodePosition, encodePosition, isAfter, type FeedPosition } from './position.js';
import { outboundFetch } from '../outbound-fetch.js';

export const DEFAULT_APPVIEW_URL = 'https://public.api.bsky.app';

export interface BlueskySourceOptions {
  /** Default https://public.api.bsky.app. */
  appViewUrl?: string;
  idMap: IdMap;
  /**
   * How long a timeline call keeps reading further AppView pages once it has some tweets; default
   * 5 000 ms (buildSource: half the call's timeout, which covers the whole call).
   */
  walkBudgetMs?: number;
  /** Default outboundFetch (no Brotli, ../outbound-fetch.ts). */
  fetch?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** The AppView's limit is one budget for all its methods. */
const RATE_KEY = 'AppView';

/** AppView pages a single call may read while looking for tweets within its bounds. */
const MAX_PAGES_PER_CALL = 10;
/** getProfiles takes at most 25 actors. */
const PROFILES_PER_CALL = 25;

function clampLimit(limit: number): number {
  return Number.isFinite(limit) ? Math.min(100, Math.max(1, Math.trunc(limit))) : 100;
}

/** AppView page size when `wanted` more tweets are needed: some margin for reposts and bounds. */
function pageSize(wanted: number): number {
  return Math.min(100, wanted * 2 + 5);
}

function protectedError(what: string): SourceError {
  return new SourceError('protected', `${what}: the account asks not to be shown to logged-out readers (!no-unauthenticated)`);
}

function withNext<T>(items: T[], next: string | undefined): SourcePage<T> {
  return next === undefined ? { items } : { items, next };
}

export class BlueskySource implements DataSource {
  readonly name = 'bluesky';
  private readonly agent: Agent;
  private readonly idMap: IdMap;
  private readonly walkBudgetMs: number;
  private readonly now: () => number;
  private readonly rateLimits: RateLimitTracker;
  private readonly service: string;
  private readonly fetchImpl: typeof fetch;

  constructor(options: BlueskySourceOptions) {
    const service = (options.appViewUrl ?? DEFAULT_APPVIEW_URL).replace(/\/+$/, '');
    this.agent = new Agent({ service, fetch: options.fetch ?? outboundFetch });
    this.service = service;
    this.fetchImpl = options.fetch ?? outboundFetch;
    this.idMap = options.idMap;
    this.walkBudgetMs = options.walkBudgetMs ?? 5_000;
    this.now = options.now ?? Date.now;
    this.rateLimits = new RateLimitTracker({ label: 'The Bluesky AppView', now: this.now, ...(options.sleep ? { sleep: options.sleep } : {}) });
  }

  /** The AppView's health check: any answer below 500 shows it can be reached (a 429 included). */
  async probe(call?: CallOptions): Promise<void> {
    let status: number;
    try {
      const res = await this.fetchImpl(new URL('/xrpc/_health', this.service), call?.signal ? { signal: call.signal } : {});
      status = res.status;
      await res.body?.cancel();
    } catch (err) {
      if (call?.signal?.aborted) throw call.signal.reason;
      throw toSourceError(err, { what: 'the readiness probe (/xrpc/_health)', now: this.now() });
    }
    if (status >= 500) {
      throw new SourceError('unavailable', `The Bluesky AppView failed its health check with HTTP ${status}: check BLUESKY_APPVIEW_URL`, undefined, { status });
    }
  }

  async getUserByUsername(username: string, call?: CallOptions): Promise<SocialProfile> {
    const handle = (username.startsWith('@') ? username.slice(1) : username).toLowerCase();
    const what = `user @${handle}`;
    // A handle is a domain name: nothing else can exist on Bluesky.
    if (!isHandle(handle)) throw new SourceError('not_found', `${what} cannot exist on Bluesky (a handle is a domain name)`);
    return this.profile(await this.profileView(handle, what, call?.signal));
  }

  async getUserById(id: string, call?: CallOptions): Promise<SocialProfile> {
    const what = `user ${id}`;
    return this.profile(await this.profileView(await this.didOf(id, what), what, call?.signal));
  }

  async getTweet(id: string, call?: CallOptions): Promise<Tweet> {
    const what = `tweet ${id}`;
    const view = await this.postView(await this.uriOf(id, what), what, call?.signal);
    return mapPost(view, await new Refs().postView(view).resolve(this.idMap, this.now()));
  }

  async getRetweeters(tweetId: string, page: { limit: number; after?: string }, call?: CallOptions): Promise<SourcePage<RetweetEdge>> {
    const signal = call?.signal;
    const what = `retweeters of tweet ${tweetId}`;
    const uri = await this.uriOf(tweetId, what);
    const limit = clampLimit(page.limit);
    let cursor = page.after || undefined;
    // A list of nobody is also what the AppView answers for a post that is gone: check it on the first page.
    const exists = cursor === undefined ? this.postView(uri, `tweet ${tweetId}`, signal) : Promise.resolve(undefined);
    for (let pages = 0; ; pages++) {
      const [res] = await Promise.all([
        this.call(what, signal, (opts) => this.agent.app.bsky.feed.getRepostedBy({ uri, limit, ...(cursor ? { cursor } : {}) }, opts)),
        pages === 0 ? exists : undefined,
      ]);
      const next = res.data.cursor || undefined;
      // Skip pages the AppView emptied (reposts by accounts it no longer shows), within reason.
      if (res.data.repostedBy.length === 0 && next !== undefined && next !== cursor && pages + 1 < MAX_PAGES_PER_CALL) {
        cursor = next;
        continue;
      }
      const profiles = await this.detailedProfiles(res.data.repostedBy, what, signal);
      const refs = new Refs();
      for (const p of profiles) refs.profile(p);
      const ids = await refs.resolve(this.idMap, this.now());
      return withNext(
        profiles.map((p) => ({ user: mapProfile(p, ids), retweetedAt: null })),
        res.data.repostedBy.length === 0 ? undefined : next,
      );
    }
  }

  async getUserTweets(userId: string, query: TimelineQuery, call?: CallOptions): Promise<SourcePage<Tweet>> {
    const signal = call?.signal;
    const what = `tweets of user ${userId}`;
    const did = await this.didOf(userId, what);
    const limit = clampLimit(query.limit);
    let pos: FeedPosition = query.after ? decodePosition(query.after) : { cursor: undefined, size: pageSize(limit) };
    const sinceMs = query.sinceId !== undefined ? postIdMs(query.sinceId) : undefined;
    const lowerMs = Math.max(query.startTime?.getTime() ?? -Infinity, sinceMs ?? -Infinity);
    // Post ids carry their sort time (ids.ts): nothing sorted after untilId's time can be below it.
    const untilMs = query.untilId !== undefined ? postIdMs(query.untilId) : undefined;
    const endMs = untilMs === undefined ? query.endTime?.getTime() : Math.min(query.endTime?.getTime() ?? Infinity, untilMs + 1);
    const items: Tweet[] = [];
    const started = this.now();

    for (let pages = 0; pages < MAX_PAGES_PER_CALL; pages++) {
      if (items.length > 0 && this.now() - started >= this.walkBudgetMs) break;
      const feed = await this.authorFeed(did, pos, what, signal);
      if (feed.feed.some((item) => item.post.author.did === did && isNoUnauthenticated(item.post.author.labels))) throw protectedError(what);
      if (query.after === undefined && pages === 0) await this.checkVisible(did, feed.feed, what, signal);
      const last = pos.last;
      const own = feed.feed
        .map((item, index) => ({ item, index, ms: postSortMs(item.post.record, item.post.indexedAt) ?? 0 }))
        .filter(({ item, ms }) => item.reason === undefined && item.post.author.did === did && isAfter(ms, item.post.cid, last));
      // The feed is newest first: past a lower bound, nothing further can qualify.
      const reachedLower = own.some(({ ms }) => ms < lowerMs);
      const inBounds = own.filter(({ ms }) => ms >= lowerMs && (endMs === undefined || ms < endMs));
      const refs = new Refs();
      for (const { item } of inBounds) refs.feedItem(item);
      const ids = await refs.resolve(this.idMap, this.now());
      const next = feed.cursor || undefined;

      for (const [i, { item, index, ms }] of inBounds.entries()) {
        const tweet = mapPost(item.post, ids);
        if (query.sinceId !== undefined && compareIds(tweet.id, query.sinceId) <= 0) continue;
        if (query.untilId !== undefined && compareIds(tweet.id, query.untilId) >= 0) continue;
        items.push(tweet);
        if (items.length < limit) continue;
        if (reachedLower && i === inBounds.length - 1) return { items };
        if (index + 1 < feed.feed.length) return { items, next: encodePosition({ cursor: pos.cursor, size: pos.size, last: { ms, cid: item.post.cid } }) };
        return withNext(items, next === undefined ? undefined : encodePosition({ cursor: next, size: pageSize(limit) }));
      }
      if (reachedLower) return { items };
      if (next === undefined || feed.feed.length === 0 || next === pos.cursor) return { items };
      pos = { cursor: next, size: pageSize(limit - items.length) };
    }
    // Many pages, or a long time, without enough tweets in bounds (e.g. an account that mostly
    // reposts): the next call goes on from here.
    return { items, next: encodePosition(pos) };
  }

  async getCommunity(id: string): Promise<Community> {
    throw new SourceError('not_found', `community ${id}: Bluesky has no communities`);
  }

  // --- reads ---

  private async profileView(actor: string, what: string, signal: AbortSignal | undefined): Promise<AppBskyActorDefs.ProfileViewDetailed> {
    return (await this.call(what, signal, (opts) => this.agent.app.bsky.actor.getProfile({ actor }, opts))).data;
  }

  private async postView(uri: string, what: string, signal: AbortSignal | undefined): Promise<AppBskyFeedDefs.PostView> {
    const res = await this.call(what, signal, (opts) => this.agent.app.bsky.feed.getPosts({ uris: [uri] }, opts));
    const view = res.data.posts.find((p) => p.uri === uri);
    if (!view) throw new SourceError('not_found', `Bluesky does not show ${what} (deleted, or its author is gone)`);
    if (isNoUnauthenticated(view.author.labels)) throw protectedError(what);
    return view;
  }

  private async authorFeed(did: string, pos: FeedPosition, what: string, signal: AbortSignal | undefined): Promise<{ feed: AppBskyFeedDefs.FeedViewPost[]; cursor?: string }> {
    try {
      const params = { actor: did, limit: pos.size, filter: 'posts_with_replies', ...(pos.cursor ? { cursor: pos.cursor } : {}) };
      return (await this.call(what, signal, (opts) => this.agent.app.bsky.feed.getAuthorFeed(params, opts))).data;
    } catch (err) {
      // "Profile not found" also covers taken-down accounts: the profile tells which.
      if (err instanceof SourceError && err.kind === 'not_found') await this.profileView(did, what, signal);
      throw err;
    }
  }

  /** The first page shows none of the author's posts (which carry the author's labels): the profile tells whether it is protected. */
  private async checkVisible(did: string, feed: AppBskyFeedDefs.FeedViewPost[], what: string, signal: AbortSignal | undefined): Promise<void> {
    if (feed.some((item) => item.post.author.did === did)) return;
    const profile = await this.profileView(did, what, signal);
    if (isNoUnauthenticated(profile.labels)) throw protectedError(what);
  }

  /** Full profiles (with counts) for the basic views of a list, in the same order; a basic view where none came. */
  private async detailedProfiles(views: AppBskyActorDefs.ProfileView[], what: string, signal: AbortSignal | undefined): Promise<ProfileLike[]> {
    const parts: string[][] = [];
    for (let i = 0; i < views.length; i += PROFILES_PER_CALL) parts.push(views.slice(i, i + PROFILES_PER_CALL).map((v) => v.did));
    const answers = await Promise.all(parts.map((actors) => this.call(what, signal, (opts) => this.agent.app.bsky.actor.getProfiles({ actors }, opts))));
    const byDid = new Map(answers.flatMap((a) => a.data.profiles).map((p) => [p.did, p] as const));
    return views.map((v) => byDid.get(v.did) ?? v);
  }

  // --- ids ---

  private async profile(view: AppBskyActorDefs.ProfileViewDetailed): Promise<SocialProfile> {
    return mapProfile(view, await new Refs().profile(view).resolve(this.idMap, this.now()));
  }

  private async didOf(id: string, what: string): Promise<string> {
    const did = /^[0-9]{1,19}$/.test(id) ? await this.idMap.userDid(id) : undefined;
    if (did === undefined) throw new SourceError('not_found', `${what}: no Bluesky account has this id here`);
    return did;
  }

  private async uriOf(id: string, what: string): Promise<string> {
    const uri = /^[0-9]{1,19}$/.test(id) ? await this.idMap.postUri(id) : undefined;
    if (uri === undefined) throw new SourceError('not_found', `${what}: no Bluesky post has this id here`);
    return uri;
  }

  /**
   * One AppView call, within its rate limit, aborted by `signal`; every failure becomes a SourceError
   * (an abort rethrows the signal's reason).
   */
  private async call<T extends { headers: HeaderBag }>(what: string, signal: AbortSignal | undefined, fn: (opts: { signal?: AbortSignal }) => Promise<T>): Promise<T> {
    await this.rateLimits.acquire(RATE_KEY, 0);
    let res: T;
    try {
      res = await fn(signal ? { signal } : {});
    } catch (err) {
      const x = err as { status?: unknown; headers?: HeaderBag };
      const status = typeof x.status === 'number' && x.status >= 100 ? x.status : undefined;
      const now = this.now();
      const headers = status === undefined ? {} : readRateLimitHeaders(x.headers, 'ratelimit-', now);
      if (status === 429) headers.resetAtMs = resetAtFromHeaders(x.headers, 'ratelimit-', now)?.getTime();
      const heldUntil = this.rateLimits.settle(RATE_KEY, status, headers);
      if (signal?.aborted) throw signal.reason;
      const error = toSourceError(err, { what, now });
      if (error.kind === 'rate_limited' && heldUntil) {
        // The tracker holds every call back until then (its fallback when the answer gave no reset).
        throw new SourceError('rate_limited', `The Bluesky AppView's rate limit for ${what} is exhausted until ${heldUntil.toISOString()}`, heldUntil, error.upstream);
      }
      throw error;
    }
    this.rateLimits.settle(RATE_KEY, 200, readRateLimitHeaders(res.headers, 'ratelimit-', this.now()));
    return res;
  }
}
