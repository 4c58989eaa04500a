// The per-request hot path of metering: key lookup, hold, settle, release. Two implementations of
// one interface: SQLite keeps holds in the process and settles a turn's charges in one group-commit
// job (see SqliteMeterStore); Postgres keeps holds in the database and runs each step as one
// statement (data-modifying CTEs), so every step is one round trip and atomic on its own.
import type SQLite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { counterIds, nowIso } from '../domain/ids.js';
import type { Database } from '../db/schema.js';
import type { Store } from '../db/connect.js';
import { AppError } from '../errors/app-error.js';
import { TurnMemo } from '../db/turn-memo.js';

const newReservationId = counterIds('rsv');

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
  /** Synchronous where the store allows it (SQLite), so a request need not wait a turn. */
  findKey(keyHash: string): AuthRecord | undefined | Promise<AuthRecord | undefined>;
  /** Holds `amount` credits if the available balance covers it (synchronous on SQLite). */
  reserve(accountId: string, amount: number): ReserveResult | Promise<ReserveResult>;
  /**
   * Turns a hold into a charge with its ledger entry; undefined if the hold is gone (settled or
   * released). Rejects with insufficient_credits if another process spent the credits meanwhile.
   */
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

type ChargeOutcome = { charged: number; balance: number } | { insufficient: number } | 'gone';

interface PendingCharge {
  reservationId: string;
  accountId: string;
  amount: number;
  info: ChargeInfo;
  resolve: (r: { charged: number; balance: number } | undefined) => void;
  reject: (err: unknown) => void;
}

function deliver(c: PendingCharge, o: ChargeOutcome): void {
  if (o === 'gone') c.resolve(undefined);
  else if ('insufficient' in o) {
    c.reject(new AppError('insufficient_credits', `This call costs ${c.amount} credits and your available balance is ${o.insufficient}.`, { required: c.amount, balance: o.insufficient }));
  } else c.resolve(o);
}

// SQLite: the hold lives in this process (a store on one host, one writer at a time), and the charge
// is the conditional debit itself. A hold checks the balance (read once per event-loop turn) minus
// this process's other holds, so work is never started for credits that are not there; the debit at
// settle re-checks inside the write transaction, so a second process spending the same credits
// meanwhile gets 402, never a negative balance. A process that dies leaves no hold behind.
export class SqliteMeterStore implements MeterStore {
  private readonly findKeyStmt: SQLite.Statement<[string], KeyRow>;
  private readonly balanceStmt: SQLite.Statement<[string], { balance: number; available: number }>;
  private readonly chargeAll: (batch: PendingCharge[]) => ChargeOutcome[];
  private batch: PendingCharge[] | undefined;
  private readonly releaseStoredOp: (id: string) => boolean;
  private readonly holds = new Map<string, { accountId: string; amount: number }>();
  private readonly held = new Map<string, number>();
  // Available balances, read once per event-loop turn (0 for an unknown account).
  private readonly seen = new TurnMemo<string, number>();
  private readonly readAvailable: (accountId: string) => number;

  constructor(
    db: SQLite.Database,
    private readonly grouped: <T>(fn: () => T) => Promise<T>,
  ) {
    this.findKeyStmt = db.prepare(
      `select k.id as keyId, k.account_id as accountId, k.revoked_at as revokedAt, a.plan_id as planId, a.balance as balance,
              a.rate_limit_per_minute as rateLimitPerMinute
         from api_keys k join accounts a on a.id = k.account_id where k.key_hash = ?`,
    );
    this.balanceStmt = db.prepare('select balance, balance - reserved as available from accounts where id = ?');
    const read = this.balanceStmt;
    // Holds kept in the database by an older version count against the balance too.
    this.readAvailable = (accountId) => read.get(accountId)?.available ?? 0;
    const takeHold = db.prepare<[string], { account_id: string; amount: number }>('delete from credit_reservations where id = ? returning account_id, amount');
    const unhold = db.prepare('update accounts set reserved = reserved - ? where id = ?');
    this.releaseStoredOp = (id) => {
      const h = takeHold.get(id);
      if (!h) return false;
      unhold.run(h.amount, h.account_id);
      this.seen.delete(h.account_id);
      return true;
    };
    const debit = db.prepare('update accounts set balance = balance - ? where id = ?');
    // Ledger entries go in multi-row INSERTs (a row costs about a third less than alone), in chunks
    // of the sizes below so that a handful of prepared statements covers any batch.
    const inserts = new Map<number, SQLite.Statement>();
    const insertRows = (args: unknown[], rows: number) => {
      let stmt = inserts.get(rows);
      if (!stmt) {
        const values = Array.from({ length: rows }, () => "(?, 'charge', ?, ?, ?, ?, ?, null, ?)").join(', ');
        inserts.set(rows, (stmt = db.prepare(`insert into ledger_entries (account_id, kind, amount, balance_after, request_id, key_id, endpoint, note, created_at) values ${values}`)));
      }
      stmt.run(...args);
    };
    const writeLedger = (args: unknown[]) => {
      let at = 0;
      for (const size of [64, 16, 4, 1]) {
        while (args.length - at >= size * 7) {
          insertRows(args.slice(at, at + size * 7), size);
          at += size * 7;
        }
      }
    };
    // The charges settled in one event-loop turn, as one job of the group commit (one savepoint):
    // inside the write transaction each account's balance is read once, the charges are checked
    // against it in order, and the account is debited once for all that passed, each with its own
    // ledger entry and balance after. Nothing else can write between the read and the debit.
    this.chargeAll = (batch) => {
      if (this.batch === batch) this.batch = undefined;
      const accounts = new Map<string, { balance: number; available: number; total: number }>();
      const at = nowIso();
      const rows: unknown[] = [];
      const results = batch.map((c): ChargeOutcome => {
        if (!this.drop(c.reservationId)) return 'gone';
        let acc = accounts.get(c.accountId);
        if (!acc) {
          const row = read.get(c.accountId);
          accounts.set(c.accountId, (acc = { balance: row?.balance ?? 0, available: row?.available ?? 0, total: 0 }));
        }
        if (acc.available < c.amount) return { insufficient: acc.available };
        acc.available -= c.amount;
        acc.balance -= c.amount;
        acc.total += c.amount;
        rows.push(c.accountId, -c.amount, acc.balance, c.info.requestId, c.info.keyId, c.info.endpoint, at);
        return { charged: c.amount, balance: acc.balance };
      });
      writeLedger(rows);
      for (const [accountId, acc] of accounts) {
        this.seen.delete(accountId);
        if (acc.total > 0) debit.run(acc.total, accountId);
      }
      return results;
    };
  }

  findKey(keyHash: string): AuthRecord | undefined {
    const r = this.findKeyStmt.get(keyHash);
    return r && toAuth(r);
  }

  reserve(accountId: string, amount: number): ReserveResult {
    checkAmount(amount);
    const available = this.seen.get(accountId, this.readAvailable) - (this.held.get(accountId) ?? 0);
    if (available < amount) return { ok: false, available: Math.max(0, available) };
    const id = newReservationId();
    this.holds.set(id, { accountId, amount });
    this.held.set(accountId, (this.held.get(accountId) ?? 0) + amount);
    return { ok: true, reservationId: id };
  }

  private drop(id: string): { accountId: string; amount: number } | undefined {
    const h = this.holds.get(id);
    if (!h) return undefined;
    this.holds.delete(id);
    const left = (this.held.get(h.accountId) ?? 0) - h.amount;
    if (left > 0) this.held.set(h.accountId, left);
    else this.held.delete(h.accountId);
    return h;
  }

  settle(reservationId: string, info: ChargeInfo): Promise<{ charged: number; balance: number } | undefined> {
    const h = this.holds.get(reservationId);
    if (!h) return Promise.resolve(undefined);
    let batch = this.batch;
    if (!batch) {
      const b: PendingCharge[] = (batch = this.batch = []);
      this.grouped(() => this.chargeAll(b)).then(
        (outcomes) => outcomes.forEach((o, i) => deliver(b[i]!, o)),
        (err) => b.forEach((c) => c.reject(err)),
      );
    }
    // No closures of our own per call: under tsx each named one costs a defineProperty.
    const c = { reservationId, accountId: h.accountId, amount: h.amount, info } as PendingCharge;
    batch.push(c);
    return new Promise((resolve, reject) => {
      c.resolve = resolve;
      c.reject = reject;
    });
  }

  async release(reservationId: string): Promise<boolean> {
    if (this.drop(reservationId)) return true;
    // A hold stored by an earlier version (before holds moved into the process), found by the sweeper.
    return this.grouped(() => this.releaseStoredOp(reservationId));
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

export function meterStoreFor(store: Store): MeterStore {
  return store.sqlite && store.grouped ? new SqliteMeterStore(store.sqlite, store.grouped) : new PostgresMeterStore(store.db);
}
