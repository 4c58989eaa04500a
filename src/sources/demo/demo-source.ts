/**
 * The demo network: a SIMULATED social network, the gateway's default data source. It works offline
 * and needs no keys. None of its users, tweets or communities are real: every name, bio, place,
 * text, link and image address is made up (links and images point at `.invalid` hosts, which never
 * resolve), and profiles say that they are simulated.
 *
 * Everything is a pure function of the seed and the clock, computed on demand from hashes: nothing
 * is stored, and each call does work proportional to its page size. With the defaults the network
 * has 200,000 users (accounts created over 2020-2022) and, by now, hundreds of millions of tweets.
 * It is alive: tweets appear as the clock passes their time, and their engagement grows with age.
 *
 * Behaviour worth knowing: ~3% of accounts are protected (their profile is visible, their tweets are
 * not: getUserTweets, getTweet and getRetweeters of their tweets throw 'protected'); ~1% are
 * suspended (every call about them throws 'suspended'); unknown or malformed ids throw 'not_found'.
 */
import type { Community, SocialProfile, Tweet } from '../../domain/models.js';
import { type DataSource, type RetweetEdge, SourceError, type SourcePage, type TimelineQuery } from '../types.js';
import { buildCommunity, parseCommunityId } from './communities.js';
import { compareParts, decodeTweetId, encodeTweetId, idBound, MAX_PER_BUCKET, MAX_TS } from './ids.js';
import { DEFAULT_EPOCH, iso, makeNet, type Net } from './network.js';
import { buildProfile } from './profiles.js';
import { engagementOf, retweetCount, retweeterIndex, retweetTime } from './retweets.js';
import { type Slot, slotExists, walkSlots } from './schedule.js';
import { buildTweet, slotId, tweetHash } from './tweets.js';
import { parseUserId, parseUsername, type UserCore, userCore } from './users.js';

export interface DemoSourceOptions {
  /** Default 1. Same seed, same network. */
  seed?: number;
  /** Default 200,000; between 100 and 1,048,576. */
  userCount?: number;
  /** The clock (tests inject one). Default: the wall clock. */
  now?: () => Date;
  /** Ids count milliseconds from here; accounts are created in the three years after it. Default 2020-01-01Z. */
  epoch?: Date;
}

const MAX_PAGE = 100;

function pageLimit(limit: number): number {
  return Number.isFinite(limit) ? Math.min(MAX_PAGE, Math.max(1, Math.floor(limit))) : 20;
}

function notFound(what: string): SourceError {
  return new SourceError('not_found', `No such ${what} in the demo network.`);
}

export class DemoSource implements DataSource {
  readonly name = 'demo';
  readonly net: Net;
  private readonly clock: () => Date;

  constructor(options: DemoSourceOptions = {}) {
    this.net = makeNet(options.seed ?? 1, options.userCount ?? 200_000, (options.epoch ?? DEFAULT_EPOCH).getTime());
    this.clock = options.now ?? (() => new Date());
  }

  /** The clock as ms since the network's epoch, within the ids' range. */
  private nowRel(): number {
    return Math.min(this.clock().getTime() - this.net.epochMs, MAX_TS);
  }

  /** A user that may be talked about: throws for unknown and suspended accounts. */
  private user(index: number, what: string): UserCore {
    if (index < 0) throw notFound(what);
    const u = userCore(this.net, index);
    if (u.status === 'suspended') throw new SourceError('suspended', `The account ${u.id} is suspended.`);
    return u;
  }

  /** The slot and author of a tweet that exists now and may be shown. */
  private visibleTweet(id: string, nowRel: number): { slot: Slot; author: UserCore } {
    const parts = decodeTweetId(id);
    if (!parts) throw notFound('tweet');
    const index = Math.floor(parts.low / MAX_PER_BUCKET);
    const seq = parts.low % MAX_PER_BUCKET;
    if (index >= this.net.userCount) throw notFound('tweet');
    const author = userCore(this.net, index);
    if (!slotExists(this.net, author, parts.ts, seq, nowRel)) throw notFound('tweet');
    if (author.status === 'suspended') throw new SourceError('suspended', `The author of tweet ${id} is suspended.`);
    if (author.status === 'protected') throw new SourceError('protected', `The author of tweet ${id} is protected.`);
    return { slot: { user: index, ts: parts.ts, seq }, author };
  }

  async getUserByUsername(username: string): Promise<SocialProfile> {
    const u = this.user(parseUsername(this.net, username), 'user');
    return buildProfile(this.net, u, this.net.epochMs + this.nowRel());
  }

  async getUserById(id: string): Promise<SocialProfile> {
    const u = this.user(parseUserId(this.net, id), 'user');
    return buildProfile(this.net, u, this.net.epochMs + this.nowRel());
  }

  async getTweet(id: string): Promise<Tweet> {
    const nowRel = this.nowRel();
    const { slot, author } = this.visibleTweet(id, nowRel);
    return buildTweet(this.net, slot, author, nowRel);
  }

  async getRetweeters(tweetId: string, page: { limit: number; after?: string }): Promise<SourcePage<RetweetEdge>> {
    const nowRel = this.nowRel();
    const { slot, author } = this.visibleTweet(tweetId, nowRel);
    const e = engagementOf(this.net, slot, author, tweetHash(this.net, slot));
    const count = retweetCount(e, nowRel);
    let k = count - 1;
    if (page.after !== undefined) {
      const m = /^([0-9]{1,16})_([0-9]{1,9})$/.exec(page.after);
      const rank = m ? Number(m[2]) : -1;
      if (!m || rank >= e.retweets || this.net.epochMs + retweetTime(e, rank) !== Number(m[1])) throw notFound('position');
      k = Math.min(rank, count) - 1;
    }
    const limit = pageLimit(page.limit);
    const nowMs = this.net.epochMs + nowRel;
    const items: RetweetEdge[] = [];
    for (; k >= 0 && items.length < limit; k--) {
      const user = userCore(this.net, retweeterIndex(this.net, e, k));
      items.push({ user: buildProfile(this.net, user, nowMs), retweetedAt: iso(this.net.epochMs + retweetTime(e, k)) });
    }
    const last = k + 1;
    return k >= 0 ? { items, next: `${this.net.epochMs + retweetTime(e, last)}_${last}` } : { items };
  }

  async getUserTweets(userId: string, query: TimelineQuery): Promise<SourcePage<Tweet>> {
    const u = this.user(parseUserId(this.net, userId), 'user');
    if (u.status === 'protected') throw new SourceError('protected', `The account ${u.id} is protected; its tweets are not visible.`);
    const nowRel = this.nowRel();
    const epoch = this.net.epochMs;
    const limit = pageLimit(query.limit);
    const afterKey = query.after !== undefined ? decodeTweetId(query.after) : undefined;
    if (query.after !== undefined && !afterKey) throw notFound('position');
    const untilKey = query.untilId !== undefined ? idBound(query.untilId) : undefined;
    if (query.untilId !== undefined && !untilKey) throw notFound('tweet (untilId)');
    // Both are exclusive upper bounds: the lower one wins.
    const upperKey = afterKey && untilKey ? (compareParts(afterKey.ts, afterKey.low, untilKey.ts, untilKey.low) <= 0 ? afterKey : untilKey) : (afterKey ?? untilKey);
    const lowerKey = query.sinceId !== undefined ? idBound(query.sinceId) : undefined;
    if (query.sinceId !== undefined && !lowerKey) throw notFound('tweet (sinceId)');
    let upperTs = nowRel;
    if (query.endTime) upperTs = Math.min(upperTs, query.endTime.getTime() - epoch - 1);
    let lowerTs = Math.max(0, u.createdMs - epoch);
    if (query.startTime) lowerTs = Math.max(lowerTs, query.startTime.getTime() - epoch);
    const walk = walkSlots(this.net, u, { upperTs, upperKey, lowerTs, lowerKey, want: limit + 1 });
    const slots = walk.slots.slice(0, limit).map((s) => ({ user: u.index, ts: s.ts, seq: s.seq }));
    const items = slots.map((s) => buildTweet(this.net, s, u, nowRel));
    const last = slots[slots.length - 1];
    if (walk.slots.length > limit && last) return { items, next: slotId(last) };
    if (walk.resumeBefore !== undefined && walk.resumeBefore > lowerTs) return { items, next: encodeTweetId(walk.resumeBefore, 0) };
    return { items };
  }

  async getCommunity(id: string): Promise<Community> {
    const index = parseCommunityId(this.net, id);
    if (index < 0) throw notFound('community');
    return buildCommunity(this.net, index);
  }
}
