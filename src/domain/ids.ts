import { randomBytes } from 'node:crypto';

// Prefixed, random, URL-safe ids (`acc_…`, `key_…`, `req_…`): a reader knows what an id names.
export function newId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}

export const nowIso = (): string => new Date().toISOString();
