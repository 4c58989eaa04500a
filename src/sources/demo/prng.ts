// Seeded hashing for the demo network. Everything the network "contains" is a pure function of
// (seed, parts...) through these helpers: 32-bit MurmurHash3 mixing over small integer parts,
// plus a tiny stateful generator (mulberry32) for drawing a tweet's words from one hash.
// All arithmetic stays in 32-bit integers (Math.imul), so the hot paths never touch BigInt.

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** MurmurHash3's 32-bit finalizer: a bijective avalanche mix. */
export function fmix32(x: number): number {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** One MurmurHash3 body round: folds a 32-bit word into the running state. */
function round(h: number, k: number): number {
  k = Math.imul(k | 0, C1);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, C2);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

/** A part may exceed 32 bits (millisecond times): fold its high word in as well. */
function high(x: number): number {
  return x >= 0x100000000 || x < 0 ? Math.floor(x / 0x100000000) | 0 : 0;
}

// Fixed-arity variants keep the hot loops free of rest-parameter arrays.
export function hash2(a: number, b: number): number {
  let h = round(0x2545f491, a);
  h = round(h, b);
  h = round(h, high(b));
  return fmix32(h ^ 12);
}

export function hash3(a: number, b: number, c: number): number {
  let h = round(0x2545f491, a);
  h = round(h, b);
  h = round(h, c);
  h = round(h, high(c));
  return fmix32(h ^ 16);
}

export function hash4(a: number, b: number, c: number, d: number): number {
  let h = round(0x2545f491, a);
  h = round(h, b);
  h = round(h, c);
  h = round(h, d);
  h = round(h, high(d));
  return fmix32(h ^ 20);
}

export function hash5(a: number, b: number, c: number, d: number, e: number): number {
  let h = round(0x2545f491, a);
  h = round(h, b);
  h = round(h, c);
  h = round(h, d);
  h = round(h, e);
  h = round(h, high(e));
  return fmix32(h ^ 24);
}

const TWO_32 = 4294967296;

/** A hash as a uniform number in [0, 1). */
export function unit(h: number): number {
  return (h >>> 0) / TWO_32;
}

/** A hash as a uniform integer in [0, n), n <= 2^32. */
export function below(h: number, n: number): number {
  return Math.floor(((h >>> 0) / TWO_32) * n);
}

/** A second, independent hash derived from a first one (for several draws from one key). */
export function rehash(h: number, salt: number): number {
  return fmix32((h ^ Math.imul(salt + 1, 0x9e3779b9)) >>> 0);
}

/** mulberry32: a small sequential generator, seeded from a hash, for variable-length content. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed | 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  float(): number {
    return this.next() / TWO_32;
  }

  int(n: number): number {
    return Math.floor(this.float() * n);
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new Error('Rng.pick on an empty list');
    return item;
  }
}

/** Salts: one per independent stream, so no two decisions share a hash. */
export const Salt = {
  userCore: 1,
  userStatus: 2,
  userProfile: 3,
  userSchedule: 4,
  userIdOffset: 5,
  bucketCount: 10,
  tweetTime: 11,
  tweet: 12,
  target: 13,
  metrics: 20,
  retweetTime: 21,
  retweetPerm: 22,
  community: 30,
  communityIdOffset: 31,
  sample: 40,
} as const;
