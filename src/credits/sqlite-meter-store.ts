// SQLite: the hold lives in this process (a store on one host, one writer at a time), and the charge
// is the conditional debit itself. A hold checks the balance (read once per event-loop turn) minus
// this process's other holds, so work is never started for credits that are not there; the debit at
// settle re-checks inside the write transaction, so a second process spending the same credits
// meanwhile gets 402, never a negative balance. A process that dies leaves no hold behind.
import type SQLite from 'better-sqlite3';
import { nowIso } from '../domain/ids.js';
import { TurnMemo } from '../db/turn-memo.js';
import type { Store } from '../db/connect.js';
import { checkAmount, insufficientCredits, toAuth, type AuthRecord, type ChargeInfo, type Charged, type KeyRow, type MeterStore, type Reservation, type ReserveResult, type SettleTarget, settlePromise } from './meter-store.js';

/**
 * Values bound per ledger row: account_id, amount, balance_after, request_id, key_id, endpoint. A
 * group's entries share one created_at, bound once per statement (`@at`): each string bound costs
 * better-sqlite3 a UTF-8 copy and SQLite another, about a seventh of a charge's binding.
 */
const LEDGER_VALUES_PER_ROW = 6;
/**
 * Rows per multi-row ledger INSERT (a row costs about a third less than alone). A batch is cut into
 * chunks of these sizes, largest first, so a handful of prepared statements covers any batch.
 */
const LEDGER_CHUNK_ROWS = [64, 32, 16, 8, 4, 2, 1] as const;

type ChargeOutcome = Charged | { insufficient: number } | 'gone';

interface Hold {
  accountId: string;
  amount: number;
  /** Neither settled nor released yet. */
  open: boolean;
}

interface PendingCharge {
  hold: Hold;
  info: ChargeInfo;
  to: SettleTarget;
  /** Whether the hold was open when the batch's job first ran (chargeAll). */
  open?: boolean;
}

function deliver(c: PendingCharge, o: ChargeOutcome): void {
  if (o === 'gone') c.to.settled(undefined);
  else if ('insufficient' in o) c.to.failed(insufficientCredits(c.hold.amount, o.insufficient));
  else c.to.settled(o);
}

export class SqliteMeterStore implements MeterStore {
  private readonly findKeyStmt: SQLite.Statement<[string], KeyRow>;
  private readonly balanceStmt: SQLite.Statement<[string], { balance: number }>;
  private readonly debitStmt: SQLite.Statement<[number, string]>;
  private readonly ledgerInserts = new Map<number, SQLite.Statement>();
  /** Charges settled in the current event-loop turn, committed together (see chargeAll). */
  private batch: PendingCharge[] | undefined;
  /** Credits held per account by this process's calls in flight. */
  private readonly held = new Map<string, number>();
  /** Balances, read once per event-loop turn (0 for an unknown account). */
  private readonly seen = new TurnMemo<string, number>();
  private readonly readBalance = (accountId: string): number => this.balanceStmt.get(accountId)?.balance ?? 0;

  constructor(
    private readonly db: SQLite.Database,
    private readonly grouped: NonNullable<Store['grouped']>,
  ) {
    this.findKeyStmt = db.prepare(
      `select k.id as keyId, k.account_id as accountId, k.revoked_at as revokedAt, a.plan_id as planId, a.balance as balance,
              a.rate_limit_per_minute as rateLimitPerMinute,
              (select count(*) from api_keys o where o.account_id = k.account_id and o.revoked_at is null) as activeKeys
         from api_keys k join accounts a on a.id = k.account_id where k.key_hash = ?`,
    );
    this.balanceStmt = db.prepare('select balance from accounts where id = ?');
    this.debitStmt = db.prepare('update accounts set balance = balance - ? where id = ?');
  }

  findKeySync(keyHash: string): AuthRecord | undefined {
    const r = this.findKeyStmt.get(keyHash);
    return r && toAuth(r);
  }

  async findKey(keyHash: string): Promise<AuthRecord | undefined> {
    return this.findKeySync(keyHash);
  }

  tryReserveSync(accountId: string, amount: number): ReserveResult {
    checkAmount(amount);
    const available = this.seen.get(accountId, this.readBalance) - (this.held.get(accountId) ?? 0);
    if (available < amount) return { ok: false, available: Math.max(0, available) };
    const hold: Hold = { accountId, amount, open: true };
    this.held.set(accountId, (this.held.get(accountId) ?? 0) + amount);
    return { ok: true, reservationId: hold as unknown as Reservation };
  }

  async reserve(accountId: string, amount: number): Promise<ReserveResult> {
    return this.tryReserveSync(accountId, amount);
  }

  settle(reservationId: Reservation, info: ChargeInfo): Promise<Charged | undefined> {
    return settlePromise((to) => this.settleTo(reservationId, info, to));
  }

  settleTo(reservationId: Reservation, info: ChargeInfo, to: SettleTarget): void {
    const hold = reservationId as unknown as Hold;
    if (!hold.open) return to.settled(undefined);
    let batch = this.batch;
    if (!batch) {
      const b: PendingCharge[] = (batch = this.batch = []);
      this.grouped(() => this.chargeAll(b), { rerunnable: true }).then(
        (outcomes) => outcomes.forEach((o, i) => deliver(b[i]!, o)),
        (err) => b.forEach((c) => c.to.failed(err)),
      );
    }
    batch.push({ hold, info, to, open: undefined });
  }

  async release(reservationId: Reservation): Promise<boolean> {
    return this.drop(reservationId as unknown as Hold);
  }

  async balance(accountId: string): Promise<number | undefined> {
    return this.balanceStmt.get(accountId)?.balance;
  }

  heldHere(accountId: string): number {
    return this.held.get(accountId) ?? 0;
  }

  /** Ends a hold: false if it had ended already. */
  private drop(h: Hold): boolean {
    if (!h.open) return false;
    h.open = false;
    const left = (this.held.get(h.accountId) ?? 0) - h.amount;
    if (left > 0) this.held.set(h.accountId, left);
    else this.held.delete(h.accountId);
    return true;
  }

  // The charges settled in one event-loop turn, as one job of the group commit: inside the write
  // transaction each account's balance is read once, the charges are checked against it in order,
  // and the account is debited once for all that passed, each with its own ledger entry and balance
  // after. Nothing else can write between the read and the debit.
  // The job is rerunnable (group-commit.ts: no savepoint, whose statement journal copied every page
  // the ledger's insert touched): if another job of the turn throws, the transaction is rolled back
  // and this one runs again. So it changes nothing in memory before its statements have run, and it
  // keeps which holds it found open the first time: a second run charges the same calls again.
  private chargeAll(batch: PendingCharge[]): ChargeOutcome[] {
    if (this.batch === batch) this.batch = undefined;
    const accounts = new Map<string, { balance: number; total: number }>();
    const at = nowIso();
    const rows: unknown[] = [];
    const results = batch.map((c): ChargeOutcome => {
      const { hold } = c;
      c.open ??= hold.open;
      if (!c.open) return 'gone';
      let acc = accounts.get(hold.accountId);
      if (!acc) accounts.set(hold.accountId, (acc = { balance: this.readBalance(hold.accountId), total: 0 }));
      if (acc.balance < hold.amount) return { insufficient: acc.balance };
      acc.balance -= hold.amount;
      acc.total += hold.amount;
      rows.push(hold.accountId, -hold.amount, acc.balance, c.info.requestId, c.info.keyId, c.info.endpoint);
      return { charged: hold.amount, balance: acc.balance };
    });
    this.writeLedger(rows, at);
    for (const [accountId, acc] of accounts) if (acc.total > 0) this.debitStmt.run(acc.total, accountId);
    for (const c of batch) this.drop(c.hold);
    for (const accountId of accounts.keys()) this.seen.delete(accountId);
    return results;
  }

  /** `values`: LEDGER_VALUES_PER_ROW values per charge, in order; `at`: every entry's created_at. */
  private writeLedger(values: unknown[], at: string): void {
    let from = 0;
    for (const rows of LEDGER_CHUNK_ROWS) {
      const width = rows * LEDGER_VALUES_PER_ROW;
      while (values.length - from >= width) {
        this.ledgerInsert(rows).run(...values.slice(from, from + width), { at });
        from += width;
      }
    }
  }

  private ledgerInsert(rows: number): SQLite.Statement {
    let stmt = this.ledgerInserts.get(rows);
    if (!stmt) {
      const values = Array.from({ length: rows }, () => "(?, 'charge', ?, ?, ?, ?, ?, null, @at)").join(', ');
      stmt = this.db.prepare(`insert or fail into ledger_entries (account_id, kind, amount, balance_after, request_id, key_id, endpoint, note, created_at) values ${values}`);
      this.ledgerInserts.set(rows, stmt);
    }
    return stmt;
  }
}
