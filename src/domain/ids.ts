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
 * then a counter. Unique across processes and restarts (72 random bits) without random bytes and a
 * base64 encoding each time. They label requests and holds in answers, logs and the ledger, and are
 * never secrets: anything a caller must not guess (keys, cursors, links) is random or signed.
 */
export function counterIds(prefix: string): () => string {
  const base = newId(prefix, 9);
  let n = 0;
  return () => base + (n++).toString(36);
}

export const newRequestId = counterIds('req');
