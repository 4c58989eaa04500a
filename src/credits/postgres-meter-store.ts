// Postgres: holds kept in the database, each step one statement (data-modifying CTEs), so every step
// is one round trip and atomic on its own.
import { sql, type Kysely } from 'kysely';
import { counterIds, nowIso } from '../domain/ids.js';
import type { Database } from '../db/schema.js';
import { checkAmount, toAuth, type AuthRecord, type ChargeInfo, type MeterStore, type ReserveResult } from './meter-store.js';

const newReservationId = counterIds('rsv');

export class PostgresMeterStore implements MeterStore {
  constructor(private readonly db: Kysely<Database>) {}

  async findKey(keyHash: string): Promise<AuthRecord | undefined> {
    const r = await this.db
      .selectFrom('api_keys as k')
      .innerJoin('accounts as a', 'a.id', 'k.account_id')
      .select(['k.id as keyId', 'k.account_id as accountId', 'k.revoked_at as revokedAt', 'a.plan_id as planId', 'a.balance', 'a.rate_limit_per_minute as rateLimitPerMinute'])
      .where('k.key_hash', '=', keyHash)
      .executeTakeFirst();
    return r && toAuth(r);
  }

  async reserve(accountId: string, amount: number): Promise<ReserveResult> {
    checkAmount(amount);
    const id = newReservationId();
    // The conditional UPDATE is the check and the hold at once; the row lock serializes concurrent holds.
    const r = await sql<{ id: string | null; available: number }>`
      with held as (
        update accounts set reserved = reserved + ${amount}
         where id = ${accountId} and balance - reserved >= ${amount}
        returning id
      ), ins as (
        insert into credit_reservations (id, account_id, amount, created_at)
        select ${id}, held.id, ${amount}, ${nowIso()} from held
        returning id
      )
      select (select id from ins) as id, (select balance - reserved from accounts where id = ${accountId}) as available`.execute(this.db);
    const row = r.rows[0];
    return row?.id ? { ok: true, reservationId: row.id } : { ok: false, available: Number(row?.available ?? 0) };
  }

  async settle(reservationId: string, info: ChargeInfo) {
    const r = await sql<{ amount: number; balance_after: number }>`
      with h as (
        delete from credit_reservations where id = ${reservationId} returning account_id, amount
      ), acc as (
        update accounts set balance = accounts.balance - h.amount, reserved = accounts.reserved - h.amount
          from h where accounts.id = h.account_id
        returning accounts.id, accounts.balance, h.amount
      )
      insert into ledger_entries (account_id, kind, amount, balance_after, request_id, key_id, endpoint, note, created_at)
      select acc.id, 'charge', -acc.amount, acc.balance, ${info.requestId}, ${info.keyId}, ${info.endpoint}, null, ${nowIso()} from acc
      returning amount, balance_after`.execute(this.db);
    const row = r.rows[0];
    return row ? { charged: -Number(row.amount), balance: Number(row.balance_after) } : undefined;
  }

  async release(reservationId: string): Promise<boolean> {
    const r = await sql<{ id: string }>`
      with h as (
        delete from credit_reservations where id = ${reservationId} returning account_id, amount
      )
      update accounts set reserved = accounts.reserved - h.amount from h where accounts.id = h.account_id
      returning accounts.id`.execute(this.db);
    return r.rows.length === 1;
  }

  async balance(accountId: string): Promise<number | undefined> {
    const r = await this.db.selectFrom('accounts').select('balance').where('id', '=', accountId).executeTakeFirst();
    return r?.balance;
  }
}
