// The X API v2 data source: app-only bearer token, outboundFetch, one request per call (two
// when X refuses our field vocabulary, see below). Parameters follow the X API v2 OpenAPI document
// (docs/upstream/x-api-v2-openapi.json); answers in post-era and tweet-era names are both understood.
// Timeouts are the resilience layer's (../resilience.ts): the signal it passes aborts the request.
//
// Field vocabulary: X_API_DIALECT picks the names we ask with first ('posts' or 'tweets', fields.ts).
// The first 400 that names one of the parameters whose names differ between the two makes the source
// ask again in the other vocabulary; if X takes it, the source keeps it for the rest of the process
// and logs it. It is tried once (tryOtherVocabulary).
import type { Community, SocialProfile, Tweet } from '../../domain/models.js';
import { RateLimitTracker, readRateLimitHeaders, resetAtFromHeaders } from '../rate-limits.js';
import { SourceError, silentLog, type CallOptions, type DataSource, type RetweetEdge, type SourceLog, type SourcePage, type TimelineQuery } from '../types.js';
import { errorFromFetchFailure, errorFromProblems, errorFromStatus } from './errors.js';
import { communityParams, DIALECT_PARAMS, tweetParams, userParams, type QueryParams, type XFieldDialect } from './fields.js';
import { asArray, asObject, asString, badResponse, isNumericId, type JsonObject } from './json.js';
import { indexIncludes, mapCommunity, mapRetweetEdge, mapTweet, mapUser, newestFirst } from './map.js';
import { aboveWindow, belowWindow, lowerId, timeParam } from './timeline-window.js';
import { outboundFetch } from '../outbound-fetch.js';

export interface XSourceOptions {
  bearerToken: string;
  /** Default 'https://api.x.com'. */
  baseUrl?: string;
  /** Default outboundFetch (no Brotli, ../outbound-fetch.ts). */
  fetch?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Parameter names to send first; default 'posts' (the OpenAPI document's). See fields.ts. */
  dialect?: XFieldDialect;
  log?: SourceLog;
  /** How long a call may wait for X's rate-limit window to reset before failing; default 0 (fail at once). */
  maxRateLimitWaitMs?: number;
  /** Share one tracker between sources that use the same token (e.g. the API's and the crawler's). */
  rateLimits?: RateLimitTracker;
}

const USERNAME = /^[A-Za-z0-9_]{1,15}$/;
/** A cursor of ours (not X's next_token): continue below this tweet id. */
const UNTIL_PREFIX = 'until_id:';

function clampLimit(limit: number): number {
  return Number.isFinite(limit) ? Math.min(100, Math.max(1, Math.trunc(limit))) : 100;
}

export class XSource implements DataSource {
  readonly name = 'x';
  private readonly bearerToken: string;
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly now: () => number;
  private readonly log: SourceLog;
  private dialectNow: XFieldDialect;
  /** The one trial of the other vocabulary: resolves to whether the source switched. */
  private dialectTrial?: Promise<boolean>;
  private readonly maxRateLimitWaitMs: number;
  readonly rateLimits: RateLimitTracker;

  constructor(options: XSourceOptions) {
    if (!options.bearerToken) throw new Error('XSource needs a bearer token');
    this.bearerToken = options.bearerToken;
    this.baseUrl = (options.baseUrl ?? 'https://api.x.com').replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? outboundFetch;
    this.now = options.now ?? Date.now;
    this.log = options.log ?? silentLog;
    this.dialectNow = options.dialect ?? 'posts';
    this.maxRateLimitWaitMs = options.maxRateLimitWaitMs ?? 0;
    this.rateLimits = options.rateLimits ?? new RateLimitTracker({ label: 'X', now: this.now, sleep: options.sleep });
  }

  /** The field vocabulary in use (it changes at most once, see the top of this file). */
  get dialect(): XFieldDialect {
    return this.dialectNow;
  }

  /** A user lookup (@X, which exists): it shows that X answers and accepts the token. */
  async probe(call?: CallOptions): Promise<void> {
    try {
      await this.get('/2/users/by/username/:username', '/2/users/by/username/X', () => ({}), 'the readiness probe (user @X)', call?.signal);
    } catch (err) {
      if (err instanceof SourceError && err.kind === 'not_found') throw new SourceError('bad_response', `X_BASE_URL (${this.baseUrl}) says @X does not exist: is it the X API?`, undefined, err.upstream);
      throw err;
    }
  }

  async getUserByUsername(username: string, call?: CallOptions): Promise<SocialProfile> {
    const handle = username.startsWith('@') ? username.slice(1) : username;
    const what = `user @${handle}`;
    // X's usernames are 1-15 letters, digits and underscores: no other can exist.
    if (!USERNAME.test(handle)) throw new SourceError('not_found', `${what} cannot exist on X`);
    const body = await this.get('/2/users/by/username/:username', `/2/users/by/username/${handle}`, userParams, what, call?.signal);
    return mapUser(this.single(body, what));
  }

  async getUserById(id: string, call?: CallOptions): Promise<SocialProfile> {
    const what = `user ${id}`;
    this.checkId(id, what);
    const body = await this.get('/2/users/:id', `/2/users/${id}`, userParams, what, call?.signal);
    return mapUser(this.single(body, what));
  }

  async getTweet(id: string, call?: CallOptions): Promise<Tweet> {
    const what = `tweet ${id}`;
    this.checkId(id, what);
    const body = await this.get('/2/tweets/:id', `/2/tweets/${id}`, tweetParams, what, call?.signal);
    return mapTweet(this.single(body, what), indexIncludes(body));
  }

  async getRetweeters(tweetId: string, page: { limit: number; after?: string }, call?: CallOptions): Promise<SourcePage<RetweetEdge>> {
    const what = `retweeters of tweet ${tweetId}`;
    this.checkId(tweetId, what);
    const params = (dialect: XFieldDialect): QueryParams => ({
      ...userParams(dialect),
      max_results: String(clampLimit(page.limit)),
      pagination_token: page.after || undefined,
    });
    const body = await this.get('/2/tweets/:id/retweeted_by', `/2/tweets/${tweetId}/retweeted_by`, params, what, call?.signal);
    const items = this.list(body, what).map(mapRetweetEdge);
    return withNext(items, nextToken(body));
  }

  async getUserTweets(userId: string, query: TimelineQuery, call?: CallOptions): Promise<SourcePage<Tweet>> {
    const what = `tweets of user ${userId}`;
    this.checkId(userId, what);
    const limit = clampLimit(query.limit);
    const cursorUntil = query.after?.startsWith(UNTIL_PREFIX) ? query.after.slice(UNTIL_PREFIX.length) : undefined;
    if (cursorUntil !== undefined && !isNumericId(cursorUntil)) throw new SourceError('bad_response', `an X timeline cursor is malformed`);
    const untilId = lowerId(cursorUntil, query.untilId);
    const params = (dialect: XFieldDialect): QueryParams => ({
      ...tweetParams(dialect),
      max_results: String(Math.max(5, limit)), // X wants 5..100
      pagination_token: cursorUntil === undefined ? query.after || undefined : undefined,
      until_id: untilId,
      since_id: query.sinceId,
      start_time: timeParam(query.startTime),
      end_time: timeParam(query.endTime),
    });
    const body = await this.get('/2/users/:id/tweets', `/2/users/${userId}/tweets`, params, what, call?.signal);
    const includes = indexIncludes(body);
    const tweets = this.list(body, what).map((raw) => mapTweet(raw, includes)).sort(newestFirst);
    const window = { ...query, untilId };
    const reachedLower = tweets.some((t) => belowWindow(t, window));
    const inWindow = tweets.filter((t) => !belowWindow(t, window) && !aboveWindow(t, window));
    const token = nextToken(body);
    const items = inWindow.slice(0, limit);
    const last = items[items.length - 1];
    // When we asked for more than the caller wanted (X's minimum is 5), the next page starts below the
    // last tweet we return; X's next_token would skip the rest.
    if (last && inWindow.length > limit) return withNext(items, `${UNTIL_PREFIX}${last.id}`);
    if (reachedLower || token === undefined) return { items };
    // Already paging by until_id, or newer tweets than the window were passed over: go on below the last one seen.
    const lastSeen = tweets[tweets.length - 1];
    if (lastSeen && (cursorUntil !== undefined || inWindow.length < tweets.length)) return withNext(items, `${UNTIL_PREFIX}${lastSeen.id}`);
    return withNext(items, token);
  }

  async getCommunity(id: string, call?: CallOptions): Promise<Community> {
    const what = `community ${id}`;
    this.checkId(id, what);
    const body = await this.get('/2/communities/:id', `/2/communities/${id}`, communityParams, what, call?.signal);
    return mapCommunity(this.single(body, what));
  }

  private checkId(id: string, what: string): void {
    if (!isNumericId(id)) throw new SourceError('not_found', `${what} cannot exist on X (ids are decimal)`);
  }

  /** `data` of a single-resource answer; a 200 with only `errors[]` becomes the matching SourceError. */
  private single(body: JsonObject, what: string): unknown {
    if (asObject(body.data)) return body.data;
    const errors = asArray(body.errors);
    if ((body.data === undefined || body.data === null) && errors.length > 0) throw errorFromProblems(errors, what);
    return badResponse(`no data for ${what}`);
  }

  /** `data` of a list answer; absent `data` is an empty page unless `errors[]` says why. */
  private list(body: JsonObject, what: string): unknown[] {
    if (Array.isArray(body.data)) return body.data;
    if (body.data === undefined || body.data === null) {
      const errors = asArray(body.errors);
      if (errors.length > 0) throw errorFromProblems(errors, what);
      return [];
    }
    return badResponse(`data for ${what} is not a list`);
  }

  /**
   * One GET to X within the endpoint's rate limit; the JSON object it answered. `params` gives the
   * query in a vocabulary (see the top of this file for the switch).
   */
  private async get(template: string, path: string, params: (dialect: XFieldDialect) => QueryParams, what: string, signal?: AbortSignal): Promise<JsonObject> {
    const dialect = this.dialectNow;
    try {
      return await this.getOnce(template, path, params(dialect), what, signal);
    } catch (err) {
      if (!refusesVocabulary(err)) throw err;
      if (this.dialectNow !== dialect) return this.getOnce(template, path, params(this.dialectNow), what, signal); // switched meanwhile
      if (this.dialectTrial) {
        if (await this.dialectTrial) return this.getOnce(template, path, params(this.dialectNow), what, signal);
        throw err;
      }
      return this.tryOtherVocabulary(err, dialect, () => this.getOnce(template, path, params(dialect === 'posts' ? 'tweets' : 'posts'), what, signal));
    }
  }

  /**
   * Asks again in the other vocabulary: any answer from X other than the same refusal means X took
   * it, and the source keeps it for the rest of the process. Calls refused meanwhile wait for the
   * verdict. A refusal of both keeps the configured one, and the switch is not tried again; a failure
   * that says nothing about the vocabulary (network, 5xx, 429) leaves the trial for a later call.
   */
  private async tryOtherVocabulary(refusal: SourceError, dialect: XFieldDialect, ask: () => Promise<JsonObject>): Promise<JsonObject> {
    const other: XFieldDialect = dialect === 'posts' ? 'tweets' : 'posts';
    const named = refusal.upstream?.parameters ?? [];
    let verdict!: (switched: boolean) => void;
    this.dialectTrial = new Promise<boolean>((resolve) => (verdict = resolve));
    const switchTo = () => {
      this.dialectNow = other;
      this.log.warn(
        { source: 'x', from: dialect, to: other, rejected: named, upstream: refusal.upstream?.body },
        `X refused the ${dialect}-era field parameter ${named.join(', ')}: X_API_DIALECT is now ${other} for this process (set X_API_DIALECT=${other} to start with it)`,
      );
      verdict(true);
    };
    let body: JsonObject;
    try {
      body = await ask();
    } catch (err) {
      if (refusesVocabulary(err)) {
        this.log.warn({ source: 'x', rejected: named, upstream: refusal.upstream?.body }, `X refused both field vocabularies; keeping X_API_DIALECT=${dialect}`);
        verdict(false);
        throw refusal;
      }
      if (err instanceof SourceError && ['not_found', 'protected', 'suspended', 'bad_response'].includes(err.kind)) switchTo();
      else {
        this.dialectTrial = undefined;
        verdict(false);
      }
      throw err;
    }
    switchTo();
    return body;
  }

  private async getOnce(template: string, path: string, params: QueryParams, what: string, signal: AbortSignal | undefined): Promise<JsonObject> {
    const key = `GET ${template}`;
    await this.rateLimits.acquire(key, this.maxRateLimitWaitMs);

    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') url.searchParams.set(name, value);

    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method: 'GET',
        headers: { authorization: `Bearer ${this.bearerToken}`, accept: 'application/json' },
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      this.rateLimits.settle(key, undefined);
      if (signal?.aborted) throw signal.reason;
      throw errorFromFetchFailure(err, what);
    }
    const throttledUntil = this.rateLimits.settle(key, response.status, readRateLimitHeaders(response.headers));

    let text: string;
    try {
      text = (await response.text()).replaceAll(this.bearerToken, '[redacted]');
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      throw errorFromFetchFailure(err, what);
    }
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
      if (response.ok) badResponse(`the answer for ${what} is not JSON`);
    }
    if (!response.ok) {
      const resetAt = throttledUntil ?? resetAtFromHeaders(response.headers, 'x-rate-limit-', this.now());
      throw errorFromStatus({ status: response.status, body, text }, what, resetAt);
    }
    return asObject(body) ?? badResponse(`the answer for ${what} is not a JSON object`);
  }
}

/** X's 400 naming a parameter whose names differ between the two vocabularies. */
function refusesVocabulary(err: unknown): err is SourceError {
  return err instanceof SourceError && err.kind === 'rejected' && err.upstream?.status === 400 && (err.upstream.parameters ?? []).some((p) => DIALECT_PARAMS.has(p));
}

function nextToken(body: JsonObject): string | undefined {
  const token = asString(asObject(body.meta)?.next_token);
  return token === undefined || token === '' ? undefined : token;
}

function withNext<T>(items: T[], next: string | undefined): SourcePage<T> {
  return next === undefined ? { items } : { items, next };
}
