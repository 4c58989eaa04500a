// A user's public profile, as seen at a given time (counts grow, pinned tweets must already exist).
import type { SocialProfile } from '../../domain/models.js';
import { DAY, HOUR, IMAGE_BASE, iso, type Net } from './network.js';
import { below, rehash, Rng, unit } from './prng.js';
import { bucketCount, slotTime } from './schedule.js';
import { GOV_BODIES, GOV_TOPICS, INTERESTS, NOUNS, ORG_SUFFIXES, PLACES, capitalize, FIRST_NAMES, LAST_NAMES } from './text.js';
import { intendedKind, slotId, tweetHash } from './tweets.js';
import { displayHandle, type UserCore, usernameOf } from './users.js';

/** Expected tweets per day of the user (the schedule's mean). */
export function tweetsPerDay(u: UserCore): number {
  return u.active ? 24 * (1 + u.rate) : 24 * u.rate;
}

function displayName(u: UserCore, rng: Rng): string {
  switch (u.verifiedType) {
    case 'government':
      return `${rng.pick(GOV_BODIES)} ${rng.pick(GOV_TOPICS)}, ${rng.pick(PLACES)}`;
    case 'business':
      return `${capitalize(rng.pick(NOUNS))} ${rng.pick(ORG_SUFFIXES)}`;
    default:
      return rng.chance(0.15) ? capitalize(rng.pick(NOUNS)) : `${rng.pick(FIRST_NAMES)} ${rng.pick(LAST_NAMES)}`;
  }
}

function bio(u: UserCore, rng: Rng): string {
  if (rng.chance(0.1)) return '';
  const a = rng.pick(INTERESTS);
  const b = rng.pick(INTERESTS);
  switch (u.verifiedType) {
    case 'government':
      return 'Notices from a fictional public office. Simulated account of the demo network.';
    case 'business':
      return `A made-up shop for ${a} and ${b}. Simulated account of the demo network.`;
    default:
      return a === b ? `Into ${a}. Simulated account.` : `Into ${a} and ${b}. Simulated account.`;
  }
}

/** A pinned tweet for some active users: an original or quote posted in their first 90 days. */
function pinnedTweetIds(net: Net, u: UserCore, nowMs: number): string[] {
  if (!u.active || unit(rehash(u.hash, 40)) >= 0.3) return [];
  const first = Math.floor((u.createdMs - net.epochMs) / HOUR) + 1;
  const h = first + below(rehash(u.hash, 41), 90 * 24);
  if ((h + 1) * HOUR > nowMs - net.epochMs) return [];
  const count = bucketCount(net, u, h);
  for (let seq = 0; seq < count; seq++) {
    const slot = { user: u.index, ts: slotTime(net, u.index, h, seq, count), seq };
    const kind = intendedKind(tweetHash(net, slot));
    if (kind === 'original' || kind === 'quote') return [slotId(slot)];
  }
  return [];
}

export function buildProfile(net: Net, u: UserCore, nowMs: number): SocialProfile {
  const rng = new Rng(rehash(u.hash, 30));
  const handle = displayHandle(net, u.index);
  const days = Math.max(0, (nowMs - u.createdMs) / DAY);
  const tweets = Math.floor(tweetsPerDay(u) * days);
  return {
    id: u.id,
    username: usernameOf(net, u.index),
    displayUsername: handle,
    name: displayName(u, rng),
    description: bio(u, rng),
    location: rng.chance(0.7) ? rng.pick(PLACES) : '',
    url: rng.chance(0.3) ? `https://${handle.toLowerCase().replace(/_/g, '-')}.demo.invalid/` : null,
    profileImageUrl: rng.chance(0.95) ? `${IMAGE_BASE}/avatars/${u.id}.png` : null,
    bannerUrl: rng.chance(0.6) ? `${IMAGE_BASE}/banners/${u.id}.jpg` : null,
    createdAt: iso(u.createdMs),
    verified: u.verifiedType !== 'none',
    verifiedType: u.verifiedType,
    protected: u.status === 'protected',
    metrics: {
      followers: u.followers,
      following: Math.floor(Math.pow(10, 0.7 + 2.8 * rng.float())),
      tweets,
      listed: Math.floor(u.followers / (60 + rng.int(200))),
      likes: Math.floor(tweets * (0.5 + 4 * rng.float())),
      media: Math.floor(tweets * 0.15 * rng.float()),
    },
    pinnedTweetIds: pinnedTweetIds(net, u, nowMs),
  };
}
