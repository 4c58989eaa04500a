// Engagement of a tweet: final totals drawn from the author's reach and a per-tweet hash, reached
// along a saturating curve of the tweet's age (capped at 7 days), so metrics never decrease.
//
// Retweets are individual events: retweet k (0 <= k < total) happens at
//   createdAt + G^-1((k + u_k) / total)
// with G the same saturating curve, so times increase with k and "how many retweets by now" is a
// binary search. Retweeter k is a distinct user from the accounts that existed when the tweet was
// posted (an affine permutation of that prefix), skipping the author and non-public accounts.
import type { Tweet } from '../../domain/models.js';
import { DAY, HOUR, type Net } from './network.js';
import { below, hash2, rehash, unit } from './prng.js';
import type { Slot } from './schedule.js';
import { isPublic, poolSize, type UserCore } from './users.js';

export const GROWTH_CAP_MS = 7 * DAY;
const RETWEET_TAU = 3 * HOUR;
/** Candidate positions per retweet; the total is capped so that they all fit in the pool. */
const TRIES = 16;

/** The share of the final total reached at `age` ms, tau the curve's time constant. */
function growth(age: number, tau: number): number {
  if (age <= 0) return 0;
  if (age >= GROWTH_CAP_MS) return 1;
  return (1 - Math.exp(-age / tau)) / (1 - Math.exp(-GROWTH_CAP_MS / tau));
}

function growthInverse(q: number, tau: number): number {
  return -tau * Math.log(1 - q * (1 - Math.exp(-GROWTH_CAP_MS / tau)));
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

export interface Engagement {
  /** tweet time, rel ms */
  ts: number;
  author: number;
  active: boolean;
  hash: number;
  retweets: number;
  likes: number;
  replies: number;
  quotes: number;
  views: number;
  bookmarks: number;
  /** users created at or before the tweet: the retweeters' pool */
  pool: number;
  mul: number;
  add: number;
}

export function engagementOf(net: Net, s: Slot, author: UserCore, tweetHash: number): Engagement {
  const h = rehash(tweetHash, 200);
  const e = Math.exp(3 * (unit(rehash(h, 1)) + unit(rehash(h, 2)) - 1));
  const viral = unit(rehash(h, 3)) < 0.01 ? 12 : 1;
  const f = author.followers;
  const pool = poolSize(net, net.epochMs + s.ts);
  let retweets = Math.floor(f * 0.004 * e * viral);
  if (author.active) retweets = Math.max(1, retweets);
  retweets = Math.min(retweets, Math.floor(pool / TRIES));
  const likes = Math.floor(retweets * (3 + 6 * unit(rehash(h, 4))) + f * 0.01 * e * viral);
  let mul = 1;
  if (pool > 2) {
    mul = 1 + below(rehash(h, 10), pool - 1);
    while (gcd(mul, pool) !== 1) mul = (mul % (pool - 1)) + 1;
  }
  return {
    ts: s.ts,
    author: s.user,
    active: author.active,
    hash: h,
    retweets,
    likes,
    replies: Math.floor(likes * 0.1 * unit(rehash(h, 5)) + retweets * 0.2),
    quotes: Math.floor(retweets * 0.15 * unit(rehash(h, 6))),
    views: Math.floor(f * (0.2 + 1.5 * unit(rehash(h, 7))) * e * viral + likes * 25 + 3),
    bookmarks: Math.floor(likes * 0.06 * unit(rehash(h, 8))),
    pool,
    mul,
    add: pool > 0 ? below(rehash(h, 11), pool) : 0,
  };
}

/** When retweet k happened (rel ms); non-decreasing in k, always after the tweet. */
export function retweetTime(e: Engagement, k: number): number {
  const q = (k + unit(hash2(e.hash, k))) / e.retweets;
  let delay = Math.max(1, Math.floor(growthInverse(q, RETWEET_TAU)));
  // An active author's first retweet comes within three minutes.
  if (k === 0 && e.active) delay = Math.min(delay, 30_000 + below(rehash(e.hash, 12), 150_000));
  return e.ts + delay;
}

/** Number of retweets that happened at or before nowRel. */
export function retweetCount(e: Engagement, nowRel: number): number {
  if (e.retweets === 0 || nowRel <= e.ts) return 0;
  if (nowRel - e.ts >= GROWTH_CAP_MS) return e.retweets;
  let lo = 0;
  let hi = e.retweets;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (retweetTime(e, mid) <= nowRel) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The user index of retweet k: distinct for distinct k, never the author, always public. */
export function retweeterIndex(net: Net, e: Engagement, k: number): number {
  let idx = -1;
  for (let m = 0; m < TRIES; m++) {
    const p = k + m * e.retweets;
    idx = (e.mul * p + e.add) % e.pool;
    if (idx !== e.author && isPublic(net, idx)) return idx;
  }
  // 16 ineligible candidates in a row (odds below 1e-20): keep the last one rather than fail.
  return idx;
}

export function tweetMetrics(e: Engagement, nowRel: number): Tweet['metrics'] {
  const age = nowRel - e.ts;
  return {
    retweets: retweetCount(e, nowRel),
    replies: Math.floor(e.replies * growth(age, 2 * HOUR)),
    likes: Math.floor(e.likes * growth(age, 3 * HOUR)),
    quotes: Math.floor(e.quotes * growth(age, 4 * HOUR)),
    views: Math.floor(e.views * growth(age, 8 * HOUR)),
    bookmarks: Math.floor(e.bookmarks * growth(age, 12 * HOUR)),
  };
}
