// A handful of ready-made names and ids of the demo network, for docs, the CLI and smoke tests.
import type { DemoSource } from './demo-source.js';
import { DAY, MINUTE } from './network.js';
import { below, hash2, Salt } from './prng.js';
import { engagementOf, retweetCount } from './retweets.js';
import { walkSlots } from './schedule.js';
import { resolveRefs, slotId, tweetHash } from './tweets.js';
import { isActive, statusOf, userCore, usernameOf } from './users.js';

export interface DemoSampleResult {
  /** Active public accounts (a tweet every hour), created in the network's first year. */
  usernames: string[];
  /** The same accounts' ids, in the same order. */
  userIds: string[];
  /** One recent tweet of each of those accounts, each with at least one retweeter at `now`. */
  tweetIds: string[];
  communityIds: string[];
  protectedUserIds: string[];
}

const COUNT = 5;
const PROTECTED_COUNT = 3;

/**
 * Deterministic for a seed: the accounts and communities depend on the seed only (given a `now`
 * more than a year after the epoch); the tweets are each account's newest qualifying tweet at `now`.
 */
export function demoSample(source: DemoSource, now: Date): DemoSampleResult {
  const net = source.net;
  const nowMs = now.getTime();
  const nowRel = nowMs - net.epochMs;
  const start = below(hash2(net.seed, Salt.sample), Math.floor(net.userCount / 4));
  const createdBy = Math.min(net.epochMs + 365 * DAY, nowMs - 7 * DAY);

  const users: number[] = [];
  const protectedUsers: number[] = [];
  for (let t = 0; t < net.userCount && (users.length < COUNT || protectedUsers.length < PROTECTED_COUNT); t++) {
    const i = (start + t) % net.userCount;
    if (users.length < COUNT && isActive(net, i) && userCore(net, i).createdMs <= createdBy) users.push(i);
    else if (protectedUsers.length < PROTECTED_COUNT && statusOf(net, i) === 'protected') protectedUsers.push(i);
  }

  const tweetIds: string[] = [];
  for (const i of users) {
    const u = userCore(net, i);
    const walk = walkSlots(net, u, { upperTs: nowRel - 10 * MINUTE, lowerTs: u.createdMs - net.epochMs, want: 48 });
    let fallback: string | undefined;
    for (const { ts, seq } of walk.slots) {
      const slot = { user: i, ts, seq };
      const th = tweetHash(net, slot);
      if (retweetCount(engagementOf(net, slot, u, th), nowRel) < 1) continue;
      if (resolveRefs(net, slot, th).kind === 'original') {
        fallback = undefined;
        tweetIds.push(slotId(slot));
        break;
      }
      fallback ??= slotId(slot);
    }
    if (fallback !== undefined) tweetIds.push(fallback);
  }

  const communityStart = below(hash2(net.seed, Salt.sample + 1), net.communityCount);
  const communityIds: string[] = [];
  for (let k = 0; k < COUNT; k++) communityIds.push(net.communityIds.encode((communityStart + k * 997) % net.communityCount));

  return {
    usernames: users.map((i) => usernameOf(net, i)),
    userIds: users.map((i) => net.userIds.encode(i)),
    tweetIds,
    communityIds,
    protectedUserIds: protectedUsers.map((i) => net.userIds.encode(i)),
  };
}
