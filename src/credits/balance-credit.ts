// Credits added to an account's balance (a grant, a refund), in the caller's transaction. Its own
// module, importing no other credits module, so that refunds.ts and credits-repo.ts can share it
// without an import cycle through meter-store.ts.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** The most credits an account holds: 2^53 - 1, the largest whole number a JavaScript number holds exactly. */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER;

/**
 * Adds `amount` to the balance: the balance after, or undefined if the account does not exist or
 * the balance would pass MAX_BALANCE (read as JavaScript numbers, balances past 2^53 - 1 round, and on
 * SQLite a grant of 1 then changed nothing while its ledger entry said 1).
 */
export async function creditBalance(trx: Kysely<Database>, accountId: string, amount: number): Promise<number | undefined> {
  const acc = await trx
    .updateTable('accounts')
    .set({ balance: sql<number>`balance + ${amount}` })
    .where('id', '=', accountId)
    .where('balance', '<=', MAX_BALANCE - amount)
    .returning(['balance'])
    .executeTakeFirst();
  return acc ? Number(acc.balance) : undefined;
}
