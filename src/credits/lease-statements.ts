// The SQL of Postgres metering on leases (the protocol is in postgres-meter-store.ts). Each method is
// one statement (one round trip, atomic), except the sweep. Lock order, so that none can deadlock
// with another: a process's owner row, then account rows (in id order), then lease rows. Renewing a
// process's liveness locks only its own owner row.
//
// What a lease has spent (migration 014): a group charge leaves the lease rows alone and names its
// process on each ledger entry (lease_owner). A lease row's amount is what it was granted less what
// was spent up to its synced_id; its process's entries for the account after synced_id are spent
// too. The process folds them in every second (sync(), from the totals of the groups it saw commit);
// a drop or a sweep reads them from the ledger, from synced_id on (the primary key's range).
import { CompiledQuery, sql, type Kysely } from 'kysely';
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

/**
 * A statement's failure that does not tell whether it committed: the connection failed (or the client
 * gave up) after the statement was sent. Postgres's own errors (a SQLSTATE) roll back what failed,
 * but for a connection exception (class 08); a connection that was never made sent nothing.
 */
export const outcomeUnknown = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code.startsWith('08');
  return !(code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN');
};

/** One group's ledger entries as the check after a lost answer finds them: balance after, by request id. */
export interface SettledOwn {
  /** This process's epoch now (undefined: it has no owner row, so no lease either). */
  epoch: number | undefined;
  /** The group's entries that committed, by request id: the balance after each. */
  charged: Map<string, number>;
}

export interface LeaseRow {
  granted: number;
  free: number | null;
  /** Other live holders asked to give back that have not answered yet. */
  waiting: number;
  /** Other live holders with credits leased. */
  others: number;
  /** Credits in leases of processes that stopped renewing (not swept yet). */
  expired: number;
  /** This process's epoch (changed by every sweep of its leases); null while it has no owner row (none granted yet). */
  epoch: number | null;
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
 * columns, $10 the time, $11 the owner's epoch as this process knows it. The `= any($1)` condition
 * repeats the join's for the planner: its generic plan (used always, see connect.ts) knows no
 * array's length, and without it it scanned every account for each group at 1,000 accounts
 * (test/scale/charge-plan.test.ts).
 *
 * First the owner row is locked (FOR SHARE, before any account: the lock order), and the statement
 * fails (LEASE_GONE) unless it still has the epoch this process knows: a sweep of this process's
 * leases changes it, after waiting for this lock, so it sees every group that committed and no group
 * after it spends what it gave back. The lease rows are not touched: each entry names its owner,
 * and the answer's last_id (the group's highest entry id) tells the process up to where its totals
 * are folded in by its next sync.
 *
 * A group over several accounts (CHARGE_GROUP_ORDERED) then locks them in id order before the
 * update (lk, FOR NO KEY UPDATE: the update's own lock, which foreign-key checks of rows that name
 * the account do not wait for): the update's join locks them in whatever order its plan reads them, and two
 * processes' groups over the same accounts deadlocked (on plans chosen per value: 3 in 8 s over 3
 * accounts), each victim waiting out deadlock_timeout (1 s). It costs Postgres about 7% more CPU a
 * group (20 accounts, 2026-12-06); a group over one account cannot deadlock so and goes without.
 */
const chargeGroup = (ordered: boolean) => `
      with o as materialized (
        select owner from credit_lease_owners where owner = $3 and epoch = $11::bigint for share
      ), chk as materialized (
        select (case when count(*) = 1 then '1' else '${LEASE_GONE}' end)::int as ok from o
      ), ${
        ordered
          ? `lk as materialized (
        select id from accounts where id = any($1::text[]) and (select ok from chk) = 1 order by id for no key update
      ), `
          : ''
      }v as (
        select * from unnest($1::text[], $2::bigint[]) as v(account_id, total)
      ), d as (
        update accounts a set balance = a.balance - v.total, reserved = a.reserved - v.total from v
         where a.id = v.account_id and a.id = any($1::text[]) and ${ordered ? '(select count(*) from lk) >= 0' : '(select ok from chk) = 1'}
        returning a.id, a.balance
      ), e as (
        select * from unnest($4::text[], $5::bigint[], $6::bigint[], $7::text[], $8::text[], $9::text[])
                 with ordinality as e(account_id, amount, later, request_id, key_id, endpoint, ord)
      ), ins as (
        insert into ledger_entries (account_id, kind, amount, balance_after, request_id, key_id, endpoint, note, created_at, lease_owner)
        select e.account_id, 'charge', -e.amount, d.balance + e.later, e.request_id, e.key_id, e.endpoint, null, $10, $3
          from e join d on d.id = e.account_id order by e.ord
        returning id
      )
      select id, balance, (select max(id) from ins) as last_id from d`;

/** The group charge over one account. */
export const CHARGE_GROUP = chargeGroup(false);
/** The group charge over several accounts: locks them in id order first. */
export const CHARGE_GROUP_ORDERED = chargeGroup(true);

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
        -- Only made if missing (the first lease): renewing it is renew()'s. An update here locked
        -- the one row every lease of this process wrote, and they queued on it; an insert tried on
        -- a row that exists would wait for a sweep updating it, while this statement holds the
        -- account row that sweep locks next (the lock order is the owner row first).
        insert into credit_lease_owners (owner, expires_at)
        select ${this.owner}, now() + make_interval(secs => ${this.leaseMs / 1000}) from acc
         where not exists (select 1 from credit_lease_owners where owner = ${this.owner})
        on conflict (owner) do nothing
        returning epoch
      ), mine as (
        -- A new row starts synced at the ledger's end: entries of an earlier row of this account and
        -- process were counted when that row was deleted (dropLease, deleteEmpty or a sweep).
        insert into credit_leases (account_id, owner, amount, synced_id)
        select acc.id, ${this.owner}, ${amount}, (select coalesce(max(id), 0) from ledger_entries) from acc
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
             coalesce((select epoch from alive), (select epoch from credit_lease_owners where owner = ${this.owner})) as epoch,
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

  /**
   * Gives back whatever is left of this process's lease on the account (its amount less what its
   * entries after synced_id spent), and deletes it. synced_id is read first and given to the second
   * statement as a value, so that Postgres plans the ledger's read as the primary key's short range
   * it is (compared with a column, it guessed a third of the table and read the account's every entry).
   */
  async dropLease(accountId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await sql`select id from accounts where id = ${accountId} for update`.execute(trx);
      const row = (await sql<{ synced_id: string }>`select synced_id from credit_leases where account_id = ${accountId} and owner = ${this.owner} for update`.execute(trx)).rows[0];
      if (!row) return;
      await sql`
        with spent as (
          select coalesce(sum(-amount), 0)::bigint as amount from ledger_entries
           where id > ${Number(row.synced_id)} and lease_owner = ${this.owner} and account_id = ${accountId}
        ), x as (
          delete from credit_leases where account_id = ${accountId} and owner = ${this.owner} returning amount
        )
        update accounts set reserved = reserved - (x.amount - (select amount from spent)) from x where accounts.id = ${accountId}`.execute(trx);
    });
  }

  /** The accounts whose lease other processes asked this one to give back. */
  async wanted(): Promise<string[]> {
    const r = await sql<{ account_id: string }>`select account_id from credit_leases where owner = ${this.owner} and wanted`.execute(this.db);
    return r.rows.map((x) => x.account_id);
  }

  /** Deletes this process's empty lease rows of the given accounts, once synced (a row leased meanwhile is not empty and stays). */
  async deleteEmpty(accountIds: string[]): Promise<void> {
    await sql`delete from credit_leases where owner = ${this.owner} and account_id = any(${accountIds}::text[]) and amount = 0`.execute(this.db);
  }

  /** Renews this process's liveness; its epoch, new if its row was gone or its leases were swept (it stalled). */
  async renew(): Promise<number> {
    const r = await sql<{ epoch: string }>`
      insert into credit_lease_owners (owner, expires_at) values (${this.owner}, now() + make_interval(secs => ${this.leaseMs / 1000}))
      on conflict (owner) do update set expires_at = excluded.expires_at
      returning epoch`.execute(this.db);
    return Number(r.rows[0]!.epoch);
  }

  /**
   * Folds what this process's leases spent into their rows: `spent` by account, the totals of the
   * groups this process saw commit since its last sync, whose entries go up to `lastId`. The groups
   * of a process go one at a time, so its entries up to lastId are exactly those groups'. A row made
   * after them (the lease dropped or swept, then leased anew) starts synced past lastId and is left
   * alone: its entries were counted when the row before it was deleted.
   */
  async sync(accountIds: string[], spent: number[], lastId: number): Promise<void> {
    await sql`
      update credit_leases c set amount = c.amount - s.spent, synced_id = ${lastId}
        from unnest(${accountIds}::text[], ${spent}::bigint[]) as s(account_id, spent)
       where c.owner = ${this.owner} and c.account_id = s.account_id and c.synced_id < ${lastId}`.execute(this.db);
  }

  /**
   * One group of charges from this process's leases: each account (`ids`, sorted) debited once by its
   * total, every ledger entry inserted with its balance after and this process's name. Fails as a
   * whole (isLeaseGone) if this process's leases were swept since it learned `epoch`. The arrays go
   * in Postgres's binary format (pg-binary-array.ts): neither pg nor Postgres then quotes or parses
   * an array literal.
   */
  async chargeGroup(ids: string[], totals: number[], e: GroupEntries, epoch: number, createdAt: string): Promise<{ balances: Array<{ id: string; balance: number }>; lastId: number }> {
    const r = await this.chargeDb.executeQuery<{ id: string; balance: number; last_id: string | null }>(
      CompiledQuery.raw(ids.length > 1 ? CHARGE_GROUP_ORDERED : CHARGE_GROUP, [
        textArray(ids),
        int8Array(totals),
        this.owner,
        textArray(e.accountIds),
        int8Array(e.amounts),
        int8Array(e.later),
        textArray(e.requestIds),
        textArray(e.keyIds),
        textArray(e.endpoints),
        createdAt,
        epoch,
      ]),
    );
    return { balances: r.rows.map((x) => ({ id: x.id, balance: Number(x.balance) })), lastId: Number(r.rows[0]?.last_id ?? 0) };
  }

  /** One charge taken from the account's available balance (no lease); `balance` null if it does not cover it. */
  async chargeFromBalance(accountId: string, amount: number, info: ChargeInfo, createdAt: string): Promise<{ balance: number | null; free: number | null; total: number | null }> {
    const r = await sql<{ balance: number | null; free: number | null; total: number | null }>`
      with d as (
        update accounts set balance = balance - ${amount} where id = ${accountId} and balance - reserved >= ${amount} returning id, balance
      ), ins as (
        insert into ledger_entries (account_id, kind, amount, balance_after, request_id, key_id, endpoint, note, created_at)
        select d.id, 'charge', ${-amount}, d.balance, ${info.requestId}, ${info.keyId}, ${info.endpoint}, null, ${createdAt} from d
      )
      select (select balance from d) as balance, (select balance - reserved from accounts where id = ${accountId}) as free,
             (select balance from accounts where id = ${accountId}) as total`.execute(this.db);
    return r.rows[0]!;
  }

  /**
   * After a charge taken from the balance whose answer was lost: the balance after it if it
   * committed, else undefined. The account's row lock waits for the statement if it still runs.
   */
  async findDirectCharge(accountId: string, createdAt: string, requestId: string): Promise<number | undefined> {
    return this.db.transaction().execute(async (trx) => {
      await sql`select id from accounts where id = ${accountId} for update`.execute(trx);
      const r = await sql<{ balance_after: string }>`
        select balance_after from ledger_entries
         where account_id = ${accountId} and created_at = ${createdAt} and request_id = ${requestId} and kind = 'charge'`.execute(trx);
      return r.rows[0] === undefined ? undefined : Number(r.rows[0].balance_after);
    });
  }

  /**
   * After a statement of this process whose answer was lost (outcomeUnknown): settles what it did.
   * Changes this process's epoch first (the owner row's lock waits for a group of it still running,
   * and every group sent before and run after fails on the old epoch), then reads which of `group`'s
   * entries committed, then gives back every lease of this process, each exactly: its amount less
   * what the ledger says it spent since its last sync, whether the statement committed or not.
   */
  async settleOwn(group: { accountIds: string[]; createdAt: string } | undefined): Promise<SettledOwn> {
    return this.db.transaction().execute(async (trx) => {
      const bumped = await sql<{ epoch: string }>`
        update credit_lease_owners set epoch = nextval('credit_lease_epochs') where owner = ${this.owner} returning epoch`.execute(trx);
      const charged = new Map<string, number>();
      if (group) {
        const r = await sql<{ request_id: string; balance_after: string }>`
          select request_id, balance_after from ledger_entries
           where account_id = any(${group.accountIds}::text[]) and created_at = ${group.createdAt} and lease_owner = ${this.owner}`.execute(trx);
        for (const row of r.rows) charged.set(row.request_id, Number(row.balance_after));
      }
      await this.release(trx, [this.owner]);
      return { epoch: bumped.rows[0] === undefined ? undefined : Number(bumped.rows[0].epoch), charged };
    });
  }

  /**
   * Gives the leases of processes that stopped renewing back to their accounts (what each has left:
   * its amount less what its entries after synced_id spent); the number swept. First each such
   * process's owner row is locked and its epoch changed: the lock waits for that process's group in
   * flight, whose entries the statements after it then see, and the new epoch fails every group of
   * that process after it. Each lease is deleted before being credited back, so two processes
   * sweeping at once release each once. Owner rows stay, expired, for a day (a process that stalled
   * that long and resumes then makes a new row, with a new epoch).
   */
  async sweep(): Promise<number> {
    const dead = await sql<{ owner: string }>`
      select o.owner from credit_lease_owners o
       where o.expires_at < now() and exists (select 1 from credit_leases l where l.owner = o.owner)
       order by o.owner`.execute(this.db);
    let swept = 0;
    let failure: unknown;
    // One transaction per process swept: one whose leases cannot be given back (a fault) does not
    // keep every other dead process's credits reserved, as one transaction for all of them did.
    for (const { owner } of dead.rows) {
      try {
        swept += await this.db.transaction().execute(async (trx) => {
          // Locked, and still expired: a sweep by another process meanwhile changed nothing it needs.
          const still = await sql`select owner from credit_lease_owners where owner = ${owner} and expires_at < now() for update`.execute(trx);
          if (still.rows.length === 0) return 0;
          await sql`update credit_lease_owners set epoch = nextval('credit_lease_epochs') where owner = ${owner}`.execute(trx);
          return this.release(trx, [owner]);
        });
      } catch (err) {
        failure ??= err;
      }
    }
    swept += await this.db.transaction().execute(async (trx) => {
      const orphans = await this.release(trx, []);
      await sql`
        delete from credit_lease_owners o
         where o.expires_at < now() - interval '1 day' and not exists (select 1 from credit_leases l where l.owner = o.owner)`.execute(trx);
      return orphans;
    });
    if (failure !== undefined) throw failure;
    return swept;
  }

  /**
   * Gives back the leases of `owners` (and any lease without an owner row), each what it has left:
   * its amount less what its entries after synced_id spent; the number given back. The owners' rows
   * must be locked by the caller's transaction, as sweep() and settleOwn() do.
   */
  private async release(trx: Kysely<Database>, owners: string[]): Promise<number> {
    // Also rows whose owner row is gone (none should be: an owner row goes only without leases).
    const doomed = sql`(l.owner = any(${owners}::text[]) or not exists (select 1 from credit_lease_owners o where o.owner = l.owner))`;
    const rows = await sql<{ account_id: string; synced_id: string }>`select l.account_id, l.synced_id from credit_leases l where ${doomed}`.execute(trx);
    let swept = 0;
    if (rows.rows.length > 0) {
      const ids = [...new Set(rows.rows.map((r) => r.account_id))].sort();
      // The ledger is read from the lowest synced_id on, given as a value (see dropLease).
      const from = Math.min(...rows.rows.map((r) => Number(r.synced_id)));
      await sql`select id from accounts where id = any(${ids}::text[]) order by id for update`.execute(trx);
      const r = await sql<{ swept: number }>`
        with x as (
          delete from credit_leases l where l.account_id = any(${ids}::text[]) and ${doomed}
          returning account_id, owner, amount, synced_id
        ), spent as (
          select x.account_id, x.owner, sum(-e.amount)::bigint as amount
            from x join ledger_entries e on e.account_id = x.account_id and e.lease_owner = x.owner and e.id > x.synced_id
           where e.id > ${from}
           group by x.account_id, x.owner
        ), left_ as (
          select x.account_id, x.amount - coalesce(spent.amount, 0) as amount
            from x left join spent on spent.account_id = x.account_id and spent.owner = x.owner
        ), s as (
          select account_id, sum(amount)::bigint as amount from left_ group by account_id
        ), u as (
          update accounts a set reserved = a.reserved - s.amount from s where a.id = s.account_id and s.amount > 0 returning a.id
        )
        select (select count(*) from left_ where amount > 0) as swept`.execute(trx);
      swept = Number(r.rows[0]?.swept ?? 0);
    }
    return swept;
  }
}
