// The SQL of Postgres metering on leases (the protocol is in postgres-meter-store.ts). Each method is
// one statement (one round trip, atomic), except the sweep. Every statement that touches both locks
// the account rows before the lease rows, accounts in id order, so none can deadlock with another;
// renewing a process's liveness locks only its own owner row.
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { nowIso } from '../domain/ids.js';
import { int8Array, textArray } from '../db/pg-binary-array.js';
import type { Database } from '../db/schema.js';
import type { ChargeInfo } from './meter-store.js';

const LEASE_GONE = 'credit lease gone';

/**
 * An assertion inside a statement: fails it (and so rolls back all its writes) unless the CTEs `a`
 * and `b` changed as many rows, i.e. every account debited had this process's lease to take it from.
 */
const assertAllText = (a: string, b: string): string =>
  `(case when (select count(*) from ${a}) = (select count(*) from ${b}) then '1' else '${LEASE_GONE}' end)::int`;
const assertAll = (a: string, b: string) => sql.raw(assertAllText(a, b));

/** A statement failed because a lease of this process was swept meanwhile (it stalled past its lease time). */
export const isLeaseGone = (err: unknown): boolean => {
  const e = err as { code?: string; message?: string };
  // The assertion above, or an account's reserved that would have gone below 0.
  return (e.code === '22P02' && (e.message ?? '').includes(LEASE_GONE)) || e.code === '23514';
};

export interface LeaseRow {
  granted: number;
  free: number | null;
  /** Other live holders asked to give back that have not answered yet. */
  waiting: number;
  /** Other live holders with credits leased. */
  others: number;
  /** Credits in leases of processes that stopped renewing (not swept yet). */
  expired: number;
}

/** One group's ledger entries, column by column (`later`: credits charged after each in the group). */
export interface GroupEntries {
  accountIds: string[];
  amounts: number[];
  later: number[];
  requestIds: string[];
  keyIds: Array<string | null>;
  endpoints: string[];
}

/**
 * The group charge's text, written once: the one statement run for every group of charges, where
 * building and compiling it through Kysely's template on each call took about 26 µs of the
 * process's CPU for a group of 25 (of about 100 µs; a `select 1` through the same pool takes about
 * 40). Parameters: $1 the account ids (sorted), $2 their totals, $3 the owner, $4-$9 the entries'
 * columns, $10 the time. The `= any($1)` conditions repeat the joins' for the planner: its generic
 * plan (used always, see connect.ts) knows no array's length, and without them it scanned every
 * account and every lease for each group at 1,000 accounts (test/scale/charge-plan.test.ts).
 */
export const CHARGE_GROUP = `
      with v as (
        select * from unnest($1::text[], $2::bigint[]) as v(account_id, total)
      ), d as (
        update accounts a set balance = a.balance - v.total, reserved = a.reserved - v.total from v
         where a.id = v.account_id and a.id = any($1::text[])
        returning a.id, a.balance
      ), mine as (
        update credit_leases c set amount = c.amount - v.total from v, d
         where d.id = v.account_id and c.account_id = v.account_id and c.account_id = any($1::text[]) and c.owner = $3 and c.amount >= v.total
        returning c.account_id
      ), e as (
        select * from unnest($4::text[], $5::bigint[], $6::bigint[], $7::text[], $8::text[], $9::text[])
                 with ordinality as e(account_id, amount, later, request_id, key_id, endpoint, ord)
      ), ins as (
        insert into ledger_entries (account_id, kind, amount, balance_after, request_id, key_id, endpoint, note, created_at)
        select e.account_id, 'charge', -e.amount, d.balance + e.later, e.request_id, e.key_id, e.endpoint, null, $10
          from e join d on d.id = e.account_id order by e.ord
      )
      select id, balance, ${assertAllText('mine', 'd')} as checked from d`;

export class LeaseStatements {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly owner: string,
    private readonly leaseMs: number,
    /** The group charges' sessions (Store.chargeDb): they always use its generic plan. */
    private readonly chargeDb: Kysely<Database> = db,
  ) {}

  /** Leases `amount` more of the account if available; if not and `ask`, asks the other live holders to give back. */
  async tryLease(accountId: string, amount: number, ask: boolean): Promise<LeaseRow> {
    const a = accountId;
    const r = await sql<LeaseRow>`
      with acc as (
        update accounts set reserved = reserved + ${amount} where id = ${a} and balance - reserved >= ${amount} returning id
      ), alive as (
        -- Only made if missing (the first lease, or after a sweep): renewing it is renew()'s. An
        -- update here locked the one row every lease of this process wrote, and they queued on it.
        insert into credit_lease_owners (owner, expires_at)
        select ${this.owner}, now() + make_interval(secs => ${this.leaseMs / 1000}) from acc
        on conflict (owner) do nothing
      ), mine as (
        insert into credit_leases (account_id, owner, amount)
        select acc.id, ${this.owner}, ${amount} from acc
        on conflict (account_id, owner) do update set amount = credit_leases.amount + excluded.amount
        returning amount
      ), live as (
        select l.owner, l.amount, l.wanted from credit_leases l join credit_lease_owners o on o.owner = l.owner
         where l.account_id = ${a} and l.owner <> ${this.owner} and o.expires_at >= now()
      ), asked as (
        update credit_leases set wanted = true
         where ${ask} and account_id = ${a} and owner in (select owner from live where amount > 0) and not exists (select 1 from acc)
        returning owner
      )
      select (select count(*) from mine) as granted,
             (select balance - reserved from accounts where id = ${a}) as free,
             (select count(*) from live where wanted and amount > 0) as waiting,
             (select count(*) from live where amount > 0) as others,
             (select coalesce(sum(l.amount), 0)::bigint from credit_leases l left join credit_lease_owners o on o.owner = l.owner
               where l.account_id = ${a} and (o.owner is null or o.expires_at < now())) as expired`.execute(this.db);
    return r.rows[0]!;
  }

  /** Gives `amount` of this process's lease back, clearing a request to give back; fails if the lease is gone. */
  async giveBack(accountId: string, amount: number): Promise<void> {
    await sql`
      with acc as (
        update accounts set reserved = reserved - ${amount} where id = ${accountId} returning id
      ), mine as (
        update credit_leases set amount = amount - ${amount}, wanted = false
         where account_id = ${accountId} and owner = ${this.owner} and amount >= ${amount} and exists (select 1 from acc)
        returning 1
      )
      select ${assertAll('mine', 'acc')}`.execute(this.db);
  }

  /** Gives back whatever is left of this process's lease on the account, and deletes it. */
  async dropLease(accountId: string): Promise<void> {
    await sql`
      with acc as (
        select id from accounts where id = ${accountId} for update
      ), x as (
        delete from credit_leases where account_id in (select id from acc) and owner = ${this.owner} returning amount
      )
      update accounts set reserved = reserved - x.amount from x where accounts.id = ${accountId}`.execute(this.db);
  }

  /** The accounts whose lease other processes asked this one to give back. */
  async wanted(): Promise<string[]> {
    const r = await sql<{ account_id: string }>`select account_id from credit_leases where owner = ${this.owner} and wanted`.execute(this.db);
    return r.rows.map((x) => x.account_id);
  }

  /** Deletes this process's empty lease rows of the given accounts (a row leased meanwhile is not empty and stays). */
  async deleteEmpty(accountIds: string[]): Promise<void> {
    await sql`delete from credit_leases where owner = ${this.owner} and account_id = any(${accountIds}::text[]) and amount = 0`.execute(this.db);
  }

  /** Renews this process's liveness; true if its row was gone (it stalled, and its leases were swept). */
  async renew(): Promise<boolean> {
    const r = await sql<{ fresh: boolean }>`
      insert into credit_lease_owners (owner, expires_at) values (${this.owner}, now() + make_interval(secs => ${this.leaseMs / 1000}))
      on conflict (owner) do update set expires_at = excluded.expires_at
      returning (xmax = 0) as fresh`.execute(this.db);
    return r.rows[0]?.fresh === true;
  }

  /**
   * One group of charges from this process's leases: each account (`ids`, sorted) debited once by its
   * total, its lease reduced by as much, every ledger entry inserted with its balance after. Fails
   * as a whole (isLeaseGone) if any of the leases is gone. The arrays go in Postgres's binary format
   * (pg-binary-array.ts): neither pg nor Postgres then quotes or parses an array literal.
   */
  async chargeGroup(ids: string[], totals: number[], e: GroupEntries): Promise<Array<{ id: string; balance: number }>> {
    const r = await this.chargeDb.executeQuery<{ id: string; balance: number }>(
      CompiledQuery.raw(CHARGE_GROUP, [
        textArray(ids),
        int8Array(totals),
        this.owner,
        textArray(e.accountIds),
        int8Array(e.amounts),
        int8Array(e.later),
        textArray(e.requestIds),
        textArray(e.keyIds),
        textArray(e.endpoints),
        nowIso(),
      ]),
    );
    return r.rows.map((x) => ({ id: x.id, balance: Number(x.balance) }));
  }

  /** One charge taken from the account's available balance (no lease); `balance` null if it does not cover it. */
  async chargeFromBalance(accountId: string, amount: number, info: ChargeInfo): Promise<{ balance: number | null; free: number | null }> {
    const r = await sql<{ balance: number | null; free: number | null }>`
      with d as (
        update accounts set balance = balance - ${amount} where id = ${accountId} and balance - reserved >= ${amount} returning id, balance
      ), ins as (
        insert into ledger_entries (account_id, kind, amount, balance_after, request_id, key_id, endpoint, note, created_at)
        select d.id, 'charge', ${-amount}, d.balance, ${info.requestId}, ${info.keyId}, ${info.endpoint}, null, ${nowIso()} from d
      )
      select (select balance from d) as balance, (select balance - reserved from accounts where id = ${accountId}) as free`.execute(this.db);
    return r.rows[0]!;
  }

  /**
   * Gives the leases of processes that stopped renewing back to their accounts; the number swept.
   * Deletes each lease before crediting it back, so two processes sweeping at once release each once.
   */
  async sweep(): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const dead = await sql<{ account_id: string }>`
        select distinct l.account_id from credit_leases l left join credit_lease_owners o on o.owner = l.owner
         where o.owner is null or o.expires_at < now()`.execute(trx);
      let swept = 0;
      if (dead.rows.length > 0) {
        const ids = dead.rows.map((r) => r.account_id).sort();
        await sql`select id from accounts where id = any(${ids}::text[]) order by id for update`.execute(trx);
        const r = await sql<{ swept: number }>`
          with x as (
            delete from credit_leases l
             where l.account_id = any(${ids}::text[])
               and not exists (select 1 from credit_lease_owners o where o.owner = l.owner and o.expires_at >= now())
            returning account_id, amount
          ), s as (
            select account_id, sum(amount)::bigint as amount from x group by account_id
          ), u as (
            update accounts a set reserved = a.reserved - s.amount from s where a.id = s.account_id and s.amount > 0 returning a.id
          )
          select (select count(*) from x where amount > 0) as swept`.execute(trx);
        swept = Number(r.rows[0]?.swept ?? 0);
      }
      await sql`delete from credit_lease_owners o where o.expires_at < now() and not exists (select 1 from credit_leases l where l.owner = o.owner)`.execute(trx);
      return swept;
    });
  }
}
