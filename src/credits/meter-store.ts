// The per-request hot path of metering: key lookup, reserve, settle, release. Two implementations
// of one interface: SQLite runs each step as one synchronous prepared-statement transaction (no
// await inside, so nothing interleaves); Postgres runs each step as one statement (data-modifying
// CTEs), so every step is one round trip and atomic on its own.
import type SQLite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { newId, nowIso } from '../domain/ids.js';
import type { Database } from '../store/schema.js';
import type { Store } from '../store/connect.js';

export interface AuthRecord {
  keyId: string;
  accountId: string;
  planId: string;
  balance: number;
  rateLimitPerMinute: number | null;
  revoked: boolean;
}

export type ReserveResult = { ok: true; reservationId: string } | { ok: false; available: number };

export interface ChargeInfo {
  requestId: string;
  keyId: string | null;
  endpoint: string;
}

export interface MeterStore {
  findKey(keyHash: string): Promise<AuthRecord | undefined>;
  /** Holds `amount` credits if the available balance (balance - reserved) covers it. */
  reserve(accountId: string, amount: number): Promise<ReserveResult>;
  /** Turns a hold into a charge with its ledger entry; undefined if the hold is gone (settled or released). */
  settle(reservationId: string, info: ChargeInfo): Promise<{ charged: number; balance: number } | undefined>;
  /** Frees a hold without charging; false if it was already settled or released. */
  release(reservationId: string): Promise<boolean>;
  balance(accountId: string): Promise<number | undefined>;
}

function checkAmount(amount: number): void {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error(`reserve: amount must be a positive integer, got ${amount}`);
}

interface KeyRow {
  keyId: string;
  accountId: string;
  revokedAt: string | null;
  planId: string;
  balance: number;
  rateLimitPerMinute: number | null;
}

const toAuth = (r: KeyRow): AuthRecord => ({
  keyId: r.keyId,
  accountId: r.accountId,
  planId: r.planId,
  balance: r.balance,
  rateLimitPerMinute: r.rateLimitPerMinute,
  revoked: r.revokedAt !== null,
});

export class SqliteMeterStore implements MeterStore {
  private readonly findKeyStmt: SQLite.Statement<[string], KeyRow>;
  private readonly balanceStmt: SQLite.Statement<[string], { balance: number }>;
  private readonly reserveOp: (accountId: string, amount: number) => ReserveResult;
  private readonly settleOp: (id: string, info: ChargeInfo) => { charged: number; balance: number } | undefined;
  private readonly releaseOp: (id: string) => boolean;

  constructor(
    db: SQLite.Database,
    private readonly grouped: <T>(fn: () => T) => Promise<T>,
  ) {
    this.findKeyStmt = db.prepare(
      `select k.id as keyId, k.account_id as accountId, k.revoked_at as revokedAt, a.plan_id as planId, a.balance as balance,
              a.rate_limit_per_minute as rateLimitPerMinute
         from api_keys k join accounts a on a.id = k.account_id where k.key_hash = ?`,
    );
    this.balanceStmt = db.prepare('select balance from accounts where id = ?');
    const hold = db.prepare<[number, string, number], { balance: number }>(
      'update accounts set reserved = reserved + ? where id = ? and balance - reserved >= ? returning balance',
    );
    const available = db.prepare<[string], { available: number }>('select balance - reserved as available from accounts where id = ?');
    const insertHold = db.prepare('insert into credit_reservations (id, account_id, amount, created_at) values (?, ?, ?, ?)');
    const takeHold = db.prepare<[string], { account_id: string; amount: number }>('delete from credit_reservations where id = ? returning account_id, amount');
    const debit = db.prepare<[number, number, string], { balance: number }>(
      'update accounts set balance = balance - ?, reserved = reserved - ? where id = ? returning balance',
    );
    const unhold = db.prepare('update accounts set reserved = reserved - ? where id = ?');
    const ledger = db.prepare(
      `insert into ledger_entries (account_id, kind, amount, balance_after, request_id, key_id, endpoint, note, created_at)
       values (?, 'charge', ?, ?, ?, ?, ?, null, ?)`,
    );
    // Each op runs inside a group-commit transaction (BEGIN IMMEDIATE…COMMIT) in a savepoint of its
    // own, synchronously, so nothing interleaves with its statements.
    this.reserveOp = (accountId: string, amount: number): ReserveResult => {
      if (!hold.get(amount, accountId, amount)) return { ok: false, available: available.get(accountId)?.available ?? 0 };
      const id = newId('rsv');
      insertHold.run(id, accountId, amount, nowIso());
      return { ok: true, reservationId: id };
    };
    this.settleOp = (id: string, info: ChargeInfo) => {
      const h = takeHold.get(id);
      if (!h) return undefined;
      const acc = debit.get(h.amount, h.amount, h.account_id)!;
      ledger.run(h.account_id, -h.amount, acc.balance, info.requestId, info.keyId, info.endpoint, nowIso());
      return { charged: h.amount, balance: acc.balance };
    };
    this.releaseOp = (id: string) => {
      const h = takeHold.get(id);
      if (!h) return false;
      unhold.run(h.amount, h.account_id);
      return true;
    };
  }

  async findKey(keyHash: string): Promise<AuthRecord | undefined> {
    const r = this.findKeyStmt.get(keyHash);
    return r && toAuth(r);
  }

  async reserve(accountId: string, amount: number): Promise<ReserveResult> {
    checkAmount(amount);
    return this.grouped(() => this.reserveOp(accountId, amount));
  }

  async settle(reservationId: string, info: ChargeInfo) {
    return this.grouped(() => this.settleOp(reservationId, info));
  }

  async release(reservationId: string): Promise<boolean> {
    return this.grouped(() => this.releaseOp(reservationId));
  }

  async balance(accountId: string): Promise<number | undefined> {
    return this.balanceStmt.get(accountId)?.balance;
  }
}

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
    const id = newId('rsv');
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

export function meterStoreFor(store: Store): MeterStore {
  return store.sqlite && store.grouped ? new SqliteMeterStore(store.sqlite, store.grouped) : new PostgresMeterStore(store.db);
}
