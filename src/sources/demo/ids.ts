// Identifiers of the demo network: all numeric decimal strings, all reversible, nothing stored.
//
// Tweet ids are snowflake-like 63-bit integers: [ 40 bits ms since the network's epoch | 20 bits
// user index | 3 bits sequence within the author's hour bucket ]. They increase with createdAt and
// decode to the author and the slot, so a tweet can be regenerated from its id alone. Encoding uses
// two Number limbs (no BigInt in the timeline loop); decoding, once per request, uses BigInt.
//
// User and community ids are an affine permutation of the index (odd multiplier modulo a power of
// two, seed-dependent offset) added to a fixed base, so ids look scattered but invert exactly.

export const TS_BITS = 40;
export const USER_BITS = 20;
export const SEQ_BITS = 3;
export const LOW_BITS = USER_BITS + SEQ_BITS;
export const LOW_SPAN = 2 ** LOW_BITS; // 8_388_608
export const MAX_USERS = 2 ** USER_BITS; // 1_048_576
export const MAX_PER_BUCKET = 2 ** SEQ_BITS; // 8 tweets per user and hour at most
export const MAX_TS = 2 ** TS_BITS - 1; // ~34.8 years after the epoch

const MAX_ID = (1n << 63n) - 1n;
const LOW_MASK = BigInt(LOW_SPAN - 1);
const LOW_SHIFT = BigInt(LOW_BITS);

/** The low 23 bits of a tweet id: author index and sequence. */
export function tweetLow(userIndex: number, seq: number): number {
  return userIndex * MAX_PER_BUCKET + seq;
}

/** ts * 2^23 + low as a decimal string, exact, using two Number limbs of 10^6. */
export function encodeTweetId(ts: number, low: number): string {
  const th = Math.floor(ts / 1e6);
  const tl = ts - th * 1e6;
  let x = th * LOW_SPAN; // < 1.1e6 * 8.4e6, exact
  let y = tl * LOW_SPAN + low; // < 8.4e12, exact
  const carry = Math.floor(y / 1e6);
  x += carry;
  y -= carry * 1e6;
  if (x === 0) return String(y);
  const tail = String(y);
  return String(x) + '000000'.slice(tail.length) + tail;
}

export interface IdParts {
  /** ms since the network's epoch */
  ts: number;
  /** userIndex * 8 + seq */
  low: number;
}

const CANONICAL = /^(0|[1-9][0-9]{0,19})$/;

/** A canonical decimal id within 63 bits, split into (ts, low); undefined when it cannot be one of ours. */
export function decodeTweetId(id: string): IdParts | undefined {
  if (!CANONICAL.test(id)) return undefined;
  const v = BigInt(id);
  if (v > MAX_ID) return undefined;
  return { ts: Number(v >> LOW_SHIFT), low: Number(v & LOW_MASK) };
}

/**
 * Any decimal id as an ordering bound (for sinceId): ids above 2^63 compare above every tweet.
 * Undefined when the text is not a decimal number.
 */
export function idBound(id: string): IdParts | undefined {
  if (!/^[0-9]{1,40}$/.test(id)) return undefined;
  const v = BigInt(id);
  if (v > MAX_ID) return { ts: Number.MAX_SAFE_INTEGER, low: 0 };
  return { ts: Number(v >> LOW_SHIFT), low: Number(v & LOW_MASK) };
}

/** (ts, low) ordering, the same as the ids' numeric ordering. */
export function compareParts(aTs: number, aLow: number, bTs: number, bLow: number): number {
  return aTs !== bTs ? aTs - bTs : aLow - bLow;
}

function modInverse(a: number, m: number): number {
  let [r0, r1] = [a % m, m];
  let [s0, s1] = [1, 0];
  while (r1 !== 0) {
    const q = Math.floor(r0 / r1);
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  if (r0 !== 1) throw new Error('not invertible');
  return ((s0 % m) + m) % m;
}

/** index <-> base + ((index * mul + offset) mod 2^bits); products stay below 2^53. */
export class AffineIds {
  private readonly size: number;
  private readonly inverse: number;
  private readonly pattern: RegExp;

  constructor(
    bits: number,
    private readonly base: number,
    private readonly mul: number,
    private readonly offset: number,
  ) {
    this.size = 2 ** bits;
    this.inverse = modInverse(mul % this.size, this.size);
    this.pattern = new RegExp(`^[1-9][0-9]{${String(base).length - 1}}$`);
  }

  encode(index: number): string {
    return String(this.base + ((index * this.mul + this.offset) % this.size));
  }

  /** The index, or -1 when the text is not an id of this space (the caller checks the count). */
  decode(id: string): number {
    if (!this.pattern.test(id)) return -1;
    const p = Number(id) - this.base;
    if (p < 0 || p >= this.size) return -1;
    return (((p - this.offset + this.size) % this.size) * this.inverse) % this.size;
  }
}

export const USER_ID_BASE = 1_300_000_000_000_000;
export const USER_ID_MUL = 0x9e3b5; // odd
export const COMMUNITY_ID_BITS = 13;
export const COMMUNITY_ID_BASE = 1_500_000_000_000_000;
export const COMMUNITY_ID_MUL = 0x1a35; // odd
