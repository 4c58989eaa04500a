import { randomFillSync } from 'node:crypto';

// Random bytes drawn from a pooled buffer: one system call per 4 KiB instead of one per id, which
// matters on the per-request path (request and reservation ids).
const pool = Buffer.alloc(4096);
let offset = pool.length;

function random(bytes: number): Buffer {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const out = pool.subarray(offset, offset + bytes);
  offset += bytes;
  return out;
}

// Prefixed, random, URL-safe ids (`acc_…`, `key_…`, `req_…`): a reader knows what an id names.
export function newId(prefix: string, bytes = 12): string {
  return `${prefix}_${random(bytes).toString('base64url')}`;
}

// Formatting a date costs more than the rest of a small request's handler: reuse it within a millisecond.
let lastMs = -1;
let lastIso = '';
export function nowIso(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/**
 * Ids for things made on every request (`req_…`, `rsv_…`): a random prefix drawn once per process,
 * then a counter passed through a keyed 32-bit permutation (a 4-round Feistel network keyed by random
 * bytes of this process). Unique across processes and restarts (72 random bits in the prefix, a new
 * prefix every 2^32 ids) without random bytes and a base64 encoding each time; and, unlike a plain
 * counter, two ids a client sees say nothing about how many requests the service served in between.
 * They are never secrets: anything a caller must not guess (keys, cursors, links) is random or signed.
 */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function counterIds(prefix: string): () => string {
  let base = newId(prefix, 9);
  const k = random(16);
  const k0 = k.readUInt32LE(0);
  const k1 = k.readUInt32LE(4);
  const k2 = k.readUInt32LE(8);
  const k3 = k.readUInt32LE(12);
  let n = 0;
  return () => {
    if (n > 0xffffffff) {
      base = newId(prefix, 9);
      n = 0;
    }
    // A bijection of 0..2^32-1 (distinct counters give distinct ids): four Feistel rounds on 16-bit halves.
    let l = n >>> 16;
    let r = n & 0xffff;
    n++;
    l ^= (Math.imul(r ^ k0, 0x9e3779b1) >>> 16) & 0xffff;
    r ^= (Math.imul(l ^ k1, 0x85ebca6b) >>> 16) & 0xffff;
    l ^= (Math.imul(r ^ k2, 0xc2b2ae35) >>> 16) & 0xffff;
    r ^= (Math.imul(l ^ k3, 0x27d4eb2f) >>> 16) & 0xffff;
    return base + HEX[l >>> 8]! + HEX[l & 0xff]! + HEX[r >>> 8]! + HEX[r & 0xff]!;
  };
}

export const newRequestId = counterIds('req');
