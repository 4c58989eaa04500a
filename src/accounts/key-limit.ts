// How many active keys an account may hold: its plan's keyLimit. Every key carries its own rate limit,
// so without a cap an account could multiply its allowance by creating keys.
import type { Kysely } from 'kysely';
import { planOf, type Plan } from '../config/plans.js';
import type { Database } from '../db/schema.js';
import { createKey, lockAccountRow, type NewKey } from './accounts-repo.js';
import { AppError } from '../errors/app-error.js';

export const DEFAULT_KEY_LIMIT = 20;

export function keyLimitOf(config: { plans: readonly Plan[]; defaultPlanId: string }, planId: string): number {
  return planOf(config, planId).keyLimit ?? DEFAULT_KEY_LIMIT;
}

/**
 * A new key for the account, or key_limit_reached when it already holds its plan's number of active
 * keys: the count and the insert in one transaction behind the account's row lock.
 */
export async function createKeyWithinLimit(db: Kysely<Database>, accountId: string, name: string | null, limit: number): Promise<NewKey> {
  return db.transaction().execute(async (trx) => {
    await lockAccountRow(trx, accountId);
    const row = await trx
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    const active = Number(row.n);
    if (active >= limit) {
      throw new AppError('key_limit_reached', `This account holds ${active} active API keys, its plan's limit of ${limit}; revoke one (DELETE /api/v1/api-keys/{id}) to create another.`, {
        limit,
        active,
      });
    }
    return createKey(trx, accountId, name);
  });
}
