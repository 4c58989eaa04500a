// When users post. Time is split into hour buckets; how many tweets user u has in bucket h is a
// pure function of hash(seed, u, h) and u's rate (with a daily rhythm), and the k-th tweet of a
// bucket sits at a hashed offset inside the k-th equal slice of the hour, so times increase with the
// sequence number. A tweet "exists" once its time has passed: the network grows as the clock runs.
// Times here are milliseconds since the network's epoch ("rel").
import { compareParts, type IdParts, MAX_PER_BUCKET, tweetLow } from './ids.js';
import { HOUR, type Net } from './network.js';
import { below, hash4, hash5, Salt, unit } from './prng.js';
import type { UserCore } from './users.js';

/** Relative posting intensity by hour of the user's day; averages 1. */
const DIURNAL: readonly number[] = [
  0.35, 0.25, 0.2, 0.2, 0.25, 0.4, 0.7, 1.0, 1.2, 1.25, 1.2, 1.2, 1.3, 1.3, 1.2, 1.15, 1.2, 1.35, 1.5, 1.6, 1.55, 1.35,
  1.0, 0.65,
];
const DIURNAL_MEAN = DIURNAL.reduce((a, b) => a + b, 0) / DIURNAL.length;

/** A page never scans more hour buckets than this (about 208 days). */
export const MAX_SCAN_BUCKETS = 5_000;

/** Inverse-CDF Poisson draw, capped. */
function poisson(u: number, lambda: number, cap: number): number {
  let p = Math.exp(-lambda);
  let cdf = p;
  let k = 0;
  while (u >= cdf && k < cap) {
    k++;
    p *= lambda / k;
    cdf += p;
  }
  return k;
}

/** Number of tweets user u has in hour bucket h (0..8); active users always have at least one. */
export function bucketCount(net: Net, u: UserCore, h: number): number {
  const lambda = (u.rate * (DIURNAL[(h + u.tz) % 24] ?? 1)) / DIURNAL_MEAN;
  const x = unit(hash4(net.seed, Salt.bucketCount, u.index, h));
  return u.active ? 1 + poisson(x, lambda, MAX_PER_BUCKET - 1) : poisson(x, lambda, MAX_PER_BUCKET);
}

/** The time (rel ms) of tweet `seq` of the `count` tweets of user `index` in bucket h. */
export function slotTime(net: Net, index: number, h: number, seq: number, count: number): number {
  const width = Math.floor(HOUR / count);
  return h * HOUR + seq * width + below(hash5(net.seed, Salt.tweetTime, index, h, seq), width);
}

/** Whether user u has a tweet at exactly (ts, seq) that exists at nowRel. */
export function slotExists(net: Net, u: UserCore, ts: number, seq: number, nowRel: number): boolean {
  if (ts > nowRel || ts < u.createdMs - net.epochMs || seq >= MAX_PER_BUCKET) return false;
  const h = Math.floor(ts / HOUR);
  const count = bucketCount(net, u, h);
  return seq < count && slotTime(net, u.index, h, seq, count) === ts;
}

/** One tweet's place in the network: author index, time (rel ms) and sequence in its hour bucket. */
export interface Slot {
  user: number;
  ts: number;
  seq: number;
}

export interface WalkQuery {
  /** Newest allowed time, inclusive (rel ms). */
  upperTs: number;
  /** Only slots whose id is below this one. */
  upperKey?: IdParts;
  /** Oldest allowed time, inclusive (rel ms). */
  lowerTs: number;
  /** Only slots whose id is above this one. */
  lowerKey?: IdParts;
  /** Stop after this many slots. */
  want: number;
}

export interface WalkResult {
  slots: { ts: number; seq: number }[];
  /** Set when the bucket budget ran out first: older tweets may exist below this time (rel ms, exclusive). */
  resumeBefore?: number;
}

/** The user's slots newest first, within the bounds, scanning at most MAX_SCAN_BUCKETS buckets. */
export function walkSlots(net: Net, u: UserCore, q: WalkQuery): WalkResult {
  const slots: { ts: number; seq: number }[] = [];
  // Start at the newest bucket either upper bound allows (an `after` position is usually far back).
  const top = q.upperKey ? Math.min(q.upperTs, q.upperKey.ts) : q.upperTs;
  if (top < q.lowerTs || q.want <= 0) return { slots };
  const base = tweetLow(u.index, 0);
  const hMin = Math.floor(q.lowerTs / HOUR);
  let scanned = 0;
  for (let h = Math.floor(top / HOUR); h >= hMin; h--) {
    if (scanned === MAX_SCAN_BUCKETS) return { slots, resumeBefore: (h + 1) * HOUR };
    scanned++;
    const count = bucketCount(net, u, h);
    for (let seq = count - 1; seq >= 0; seq--) {
      const ts = slotTime(net, u.index, h, seq, count);
      if (ts > q.upperTs) continue;
      if (q.upperKey && compareParts(ts, base + seq, q.upperKey.ts, q.upperKey.low) >= 0) continue;
      if (ts < q.lowerTs) return { slots };
      if (q.lowerKey && compareParts(ts, base + seq, q.lowerKey.ts, q.lowerKey.low) <= 0) return { slots };
      slots.push({ ts, seq });
      if (slots.length === q.want) return { slots };
    }
  }
  return { slots };
}
