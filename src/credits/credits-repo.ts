// Credits are money. Every change of a balance happens in one transaction with its ledger entry.
// The per-request steps (reserve, settle, release) live in meter-store.ts and its implementations;
// grants and reads here.
import { sql, type Kysely } from 'kysely';
import { nowIso } from '../domain/ids.js';
import type { Database } from '../db/schema.js';
import { AppError } from '../errors/app-error.js';

/** The most credits an account holds: 2^53 - 1, the largest whole number a JavaScript number holds exactly. */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER;

export async function grant(db: Kysely<Database>, accountId: string, amount: number, note: string | null, requestId: string | null = null): Promise<number> {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new Error(`grant: amount must be a positive integer, got ${amount}`);
  return db.transaction().execute(async (trx) => {
    // Balances are read as JavaScript numbers: past 2^53 - 1 they round, and on SQLite a grant of 1
    // then changed nothing while its ledger entry said 1 (the ledger no longer summed to the balance).
    const acc = await trx
      .updateTable('accounts')
      .set({ balance: sql<number>`balance + ${amount}` })
      .where('id', '=', accountId)
      .where('balance', '<=', MAX_BALANCE - amount)
      .returning(['balance'])
      .executeTakeFirst();
    if (!acc) {
      const now = await trx.selectFrom('accounts').select('balance').where('id', '=', accountId).executeTakeFirst();
      if (!now) throw new Error(`No account ${accountId}.`);
      throw new AppError('invalid_request', `A grant of ${amount} would take the balance (${Number(now.balance)}) past ${MAX_BALANCE}, the most an account holds.`);
    }
    await trx
      .insertInto('ledger_entries')
      .values({ account_id: accountId, kind: 'grant', amount, balance_after: acc.balance, request_id: requestId, key_id: null, endpoint: null, note, created_at: nowIso() })
      .execute();
    return acc.balance;
  });
}

export async function getBalance(db: Kysely<Database>, accountId: string): Promise<{ balance: number; reserved: number } | undefined> {
  return db.selectFrom('accounts').select(['balance', 'reserved']).where('id', '=', accountId).executeTakeFirst();
}

export async function ledgerSum(db: Kysely<Database>, accountId: string): Promise<number> {
  const r = await db
    .selectFrom('ledger_entries')
    .select(sql<number>`coalesce(sum(amount), 0)`.as('total'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(r.total);
}

/** Where a page of the ledger ends: the last entry's time and id (the list is newest first). */
export interface LedgerPosition {
  createdAt: string;
  id: number;
}

// Newest first by time, then id: the (account_id, created_at) index serves it (on SQLite it ends in
// the rowid; on Postgres entries of the same millisecond are sorted after the index scan), and
// the ledger keeps no index by (account_id, id) (migration 012).
export async function ledgerPage(db: Kysely<Database>, accountId: string, limit: number, before?: LedgerPosition, endpoint?: string) {
  let q = db.selectFrom('ledger_entries').selectAll().where('account_id', '=', accountId);
  if (endpoint !== undefined) q = q.where('endpoint', '=', endpoint);
  if (before !== undefined) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)));
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
}

/** An entry's time, for a cursor issued before the list was ordered by time (it carries the id only). */
export async function ledgerEntryTime(db: Kysely<Database>, accountId: string, id: number): Promise<string | undefined> {
  return (await db.selectFrom('ledger_entries').select('created_at').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst())?.created_at;
}
