import { randomBytes, randomUUID } from 'node:crypto';

// Prefixed, random, URL-safe ids (`acc_…`, `key_…`, `req_…`): a reader knows what an id names.
export function newId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}

export const nowIso = (): string => new Date().toISOString();

/** Request ids on the hot path: randomUUID draws from a cached entropy pool, so it is cheaper. */
export function newRequestId(): string {
  return `req_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
}
