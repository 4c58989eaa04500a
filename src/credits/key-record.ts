// An API key's record on Postgres, for the key check (the embedded store reads it synchronously, with
// a prepared statement of its own: sqlite-meter-store.ts).
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { toAuth, type AuthRecord } from './meter-store.js';

export async function findKeyRecord(db: Kysely<Database>, keyHash: string): Promise<AuthRecord | undefined> {
  const r = await db
    .selectFrom('api_keys as k')
    .innerJoin('accounts as a', 'a.id', 'k.account_id')
    .select(['k.id as keyId', 'k.account_id as accountId', 'k.revoked_at as revokedAt', 'a.plan_id as planId', 'a.balance', 'a.rate_limit_per_minute as rateLimitPerMinute'])
    // Through the index of active keys (migration 013): revoked keys, however many, are not read.
    .select((eb) =>
      eb
        .selectFrom('api_keys as o')
        .select(eb.fn.countAll<string>().as('n'))
        .whereRef('o.account_id', '=', 'k.account_id')
        .where('o.revoked_at', 'is', null)
        .as('activeKeys'),
    )
    .where('k.key_hash', '=', keyHash)
    .executeTakeFirst();
  return r && toAuth(r);
}
