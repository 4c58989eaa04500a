// The fixed parameters of one demo network: seed, size, epoch and the id codecs derived from them.
import { AffineIds, COMMUNITY_ID_BASE, COMMUNITY_ID_BITS, COMMUNITY_ID_MUL, MAX_USERS, USER_BITS, USER_ID_BASE, USER_ID_MUL } from './ids.js';
import { below, hash2, Salt } from './prng.js';

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;
/** Accounts are created uniformly over the first three years after the epoch, in index order. */
export const ACCOUNT_SPAN_MS = 3 * 365 * DAY;
export const DEFAULT_EPOCH = new Date('2020-01-01T00:00:00.000Z');
export const COMMUNITY_COUNT = 5_000;
export const MIN_USERS = 100;

export const TWEET_URL_BASE = 'https://demo.sdg.invalid';
export const IMAGE_BASE = 'https://img.demo.sdg.invalid';
export const MEDIA_BASE = 'https://media.demo.sdg.invalid';
export const SHORT_LINK_BASE = 'https://lnk.demo.sdg.invalid';

export interface Net {
  readonly seed: number;
  readonly userCount: number;
  readonly epochMs: number;
  readonly communityCount: number;
  readonly userIds: AffineIds;
  readonly communityIds: AffineIds;
}

export function makeNet(seed: number, userCount: number, epochMs: number): Net {
  if (!Number.isFinite(seed)) throw new RangeError('seed must be a finite number');
  if (!Number.isInteger(userCount) || userCount < MIN_USERS || userCount > MAX_USERS) {
    throw new RangeError(`userCount must be an integer between ${MIN_USERS} and ${MAX_USERS}`);
  }
  if (!Number.isFinite(epochMs)) throw new RangeError('epoch must be a valid date');
  const s = Math.floor(seed) >>> 0;
  return {
    seed: s,
    userCount,
    epochMs,
    communityCount: COMMUNITY_COUNT,
    userIds: new AffineIds(USER_BITS, USER_ID_BASE, USER_ID_MUL, below(hash2(s, Salt.userIdOffset), MAX_USERS)),
    communityIds: new AffineIds(
      COMMUNITY_ID_BITS,
      COMMUNITY_ID_BASE,
      COMMUNITY_ID_MUL,
      below(hash2(s, Salt.communityIdOffset), 2 ** COMMUNITY_ID_BITS),
    ),
  };
}

export const iso = (ms: number): string => new Date(ms).toISOString();
