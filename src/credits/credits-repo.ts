// Credits are money. Every change of a balance happens in one transaction with its ledger entry, and
// the check that funds suffice is part of the same conditional UPDATE that holds them: no read-then-write.
import { sql, type Kysely } from 'kysely';
import { newId, nowIso } from '../domain/ids.js';
import type { Database } from '../store/schema.js';

export type ReserveResult = { ok: true; reservationId: string } | { ok: false; available: number };

/** Holds `amount` credits for a call in flight, if the available balance (balance - reserved) covers it. */
export async function reserve(db: Kysely<Database>, accountId: string, amount: number): Promise<ReserveResult> {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error(`reserve: amount must be a positive integer, got ${amount}`);
  const reservationId = newId('rsv');
  return db.transaction().execute(async (trx) => {
    const held = await trx
      .updateTable('accounts')
      .set({ reserved: sql<number>`reserved + ${amount}` })
      .where('id', '=', accountId)
      .where(sql<boolean>`balance - reserved >= ${amount}`)
      .returning(['balance'])
      .executeTakeFirst();
    if (!held) {
      const acc = await trx.selectFrom('accounts').select(['balance', 'reserved']).where('id', '=', accountId).executeTakeFirst();
      return { ok: false as const, available: acc ? acc.balance - acc.reserved : 0 };
    }
    await trx.insertInto('credit_reservations').values({ id: reservationId, account_id: accountId, amount, created_at: nowIso() }).execute();
    return { ok: true as const, reservationId };
  });
}

export interface ChargeInfo {
  requestId: string;
  keyId: string | null;
  endpoint: string;
}

/**
 * Turns a reservation into a charge: debits the balance, frees the hold, writes the ledger entry.
 * Deleting the reservation row first makes a second settle (or a settle after a release) a no-op.
 */
export async function settle(db: Kysely<Database>, reservationId: string, info: ChargeInfo): Promise<{ charged: number; balance: number } | undefined> {
  return db.transaction().execute(async (trx) => {
    const rsv = await trx.deleteFrom('credit_reservations').where('id', '=', reservationId).returning(['account_id', 'amount']).executeTakeFirst();
    if (!rsv) return undefined;
    const acc = await trx
      .updateTable('accounts')
      .set({ balance: sql<number>`balance - ${rsv.amount}`, reserved: sql<number>`reserved - ${rsv.amount}` })
      .where('id', '=', rsv.account_id)
      .returning(['balance'])
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('ledger_entries')
      .values({
        account_id: rsv.account_id,
        kind: 'charge',
        amount: -rsv.amount,
        balance_after: acc.balance,
        request_id: info.requestId,
        key_id: info.keyId,
        endpoint: info.endpoint,
        note: null,
        created_at: nowIso(),
      })
      .execute();
    return { charged: rsv.amount, balance: acc.balance };
  });
}

/** Frees a reservation without charging. Releases exactly what was held, once. */
export async function release(db: Kysely<Database>, reservationId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const rsv = await trx.deleteFrom('credit_reservations').where('id', '=', reservationId).returning(['account_id', 'amount']).executeTakeFirst();
    if (!rsv) return false;
    await trx
      .updateTable('accounts')
      .set({ reserved: sql<number>`reserved - ${rsv.amount}` })
      .where('id', '=', rsv.account_id)
      .execute();
    return true;
  });
}

export async function grant(db: Kysely<Database>, accountId: string, amount: number, note: string | null, requestId: string | null = null): Promise<number> {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error(`grant: amount must be a positive integer, got ${amount}`);
  return db.transaction().execute(async (trx) => {
    const acc = await trx
      .updateTable('accounts')
      .set({ balance: sql<number>`balance + ${amount}` })
      .where('id', '=', accountId)
      .returning(['balance'])
      .executeTakeFirst();
    if (!acc) throw new Error(`No account ${accountId}.`);
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

/** Releases holds left behind by a process that died mid-call. */
export async function releaseStaleReservations(db: Kysely<Database>, olderThan: Date): Promise<number> {
  const stale = await db.selectFrom('credit_reservations').select('id').where('created_at', '<', olderThan.toISOString()).execute();
  let n = 0;
  for (const r of stale) if (await release(db, r.id)) n++;
  return n;
}

export async function ledgerSum(db: Kysely<Database>, accountId: string): Promise<number> {
  const r = await db
    .selectFrom('ledger_entries')
    .select(sql<number>`coalesce(sum(amount), 0)`.as('total'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(r.total);
}

export async function ledgerPage(db: Kysely<Database>, accountId: string, limit: number, beforeId?: number) {
  let q = db.selectFrom('ledger_entries').selectAll().where('account_id', '=', accountId);
  if (beforeId !== undefined) q = q.where('id', '<', beforeId);
  return q.orderBy('id', 'desc').limit(limit + 1).execute();
}
