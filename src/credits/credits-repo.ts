// Credits are money. Every change of a balance happens in one transaction with its ledger entry.
// The per-request steps (reserve, settle, release) live in meter-store.ts and its implementations;
// grants and reads here.
import { sql, type Kysely } from 'kysely';
import { nowIso } from '../domain/ids.js';
import type { Database } from '../db/schema.js';
import { AppError } from '../errors/app-error.js';
import { LeaseStatements } from './lease-statements.js';
import { creditBalance, MAX_BALANCE } from './balance-credit.js';

export { MAX_BALANCE };

export async function grant(db: Kysely<Database>, accountId: string, amount: number, note: string | null, requestId: string | null = null): Promise<number> {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new Error(`grant: amount must be a positive integer, got ${amount}`);
  return db.transaction().execute(async (trx) => {
    const balance = await creditBalance(trx, accountId, amount);
    if (balance === undefined) {
      const now = await trx.selectFrom('accounts').select('balance').where('id', '=', accountId).executeTakeFirst();
      if (!now) throw new Error(`No account ${accountId}.`);
      throw new AppError('invalid_request', `A grant of ${amount} would take the balance (${Number(now.balance)}) past ${MAX_BALANCE}, the most an account holds.`);
    }
    await trx
      .insertInto('ledger_entries')
      .values({ account_id: accountId, kind: 'grant', amount, balance_after: balance, request_id: requestId, key_id: null, endpoint: null, note, created_at: nowIso() })
      .execute();
    return balance;
  });
}

/** A deduction refused: what could be taken now, what API processes hold (Postgres leases, for calls in flight or to come), and whether it waited for them. */
export interface DeductRefused {
  available: number;
  leased: number;
  waited: boolean;
}

/** How long a deduction waits for API processes to give back credits they lease for no call. */
export const DEDUCT_WAIT_MS = 3_000;

/**
 * An operator's correction (a grant made by mistake, credits to take back): the balance goes down by
 * `amount`, with a ledger entry of kind `grant` and a negative amount, in one transaction, never
 * below what the account has free. On Postgres the credits API processes lease for calls (reserved)
 * are not free: the deduction sweeps the leases of processes that stopped, asks the live holders to
 * give back what they hold for no call (as a call that cannot lease does) and tries again for
 * DEDUCT_WAIT_MS. On SQLite the holds live in the API process, unseen here: a call in flight whose
 * charge no longer fits is refused at its charge (402), never charged below zero.
 */
export async function deduct(store: { db: Kysely<Database>; dialect: 'sqlite' | 'postgres' }, accountId: string, amount: number, note: string | null): Promise<{ balance: number } | DeductRefused> {
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new Error(`deduct: amount must be a positive integer, got ${amount}`);
  const deadline = Date.now() + DEDUCT_WAIT_MS;
  // Whether it has waited for leases to be given back (a deadlock victim's retry is not a wait).
  let waited = false;
  for (;;) {
    let r: { balance: number } | DeductRefused;
    try {
      r = await store.db.transaction().execute(async (trx) => {
        const acc = await trx
          .updateTable('accounts')
          .set({ balance: sql<number>`balance - ${amount}` })
          .where('id', '=', accountId)
          .where(sql<boolean>`balance - reserved >= ${amount}`)
          .returning(['balance'])
          .executeTakeFirst();
        if (acc) {
          await trx
            .insertInto('ledger_entries')
            .values({ account_id: accountId, kind: 'grant', amount: -amount, balance_after: acc.balance, request_id: null, key_id: null, endpoint: null, note, created_at: nowIso() })
            .execute();
          return { balance: Number(acc.balance) };
        }
        const now = await trx.selectFrom('accounts').select(['balance', 'reserved']).where('id', '=', accountId).executeTakeFirst();
        if (!now) throw new Error(`No account ${accountId}.`);
        return { available: Number(now.balance) - Number(now.reserved), leased: Number(now.reserved), waited };
      });
    } catch (err) {
      // Chosen as a deadlock's victim while queued behind others' locks: nothing was written.
      if ((err as { code?: unknown }).code === '40P01' && Date.now() < deadline) continue;
      throw err;
    }
    if ('balance' in r || store.dialect !== 'postgres' || r.available + r.leased < amount || Date.now() >= deadline) return r;
    // Leases hold what is missing. Those of processes that stopped are swept back (else they would
    // stay reserved until a running API process swept them); the live holders are asked to give
    // back what no call holds (they answer within a tick, postgres-meter-store.ts). Then again.
    if (!waited) await new LeaseStatements(store.db, 'sdg-deduct', 0).sweep();
    await store.db.updateTable('credit_leases').set({ wanted: true }).where('account_id', '=', accountId).where('amount', '>', 0).execute();
    await new Promise((resolve) => setTimeout(resolve, 100));
    waited = true;
  }
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
