// Crawl cycles, their per-account targets and each account's crawl position.
//
// Counting is exact across crashes: each page of tweets is stored in one unit of work together with
// the target's counters (tweets_ingested, tweets_updated), conditioned on still holding the target's
// lease. A retried account sees the tweets of its earlier attempt as already stored, so they are
// neither stored nor counted twice. A cycle's totals are the sums of its targets' rows; the cycle's
// row keeps them as running counters too (added to in the unit of work that changes a target), so
// the crawl status of a running cycle is one row read whatever its size. A completed cycle's totals
// are summed from its targets once, when it completes.
import { sql, type Kysely, type Transaction } from 'kysely';
import { holdLease, type Claim, type LeaseSpec } from '../jobs/lease.js';
import type { CrawlAccountsTable, CrawlCyclesTable, CrawlTargetsTable, Database } from '../db/schema.js';

export const targetLease: LeaseSpec = { table: 'crawl_targets', ready: 'pending', active: 'running' };
export type CycleRow = CrawlCyclesTable;
export type TargetRow = CrawlTargetsTable;
export type AccountState = CrawlAccountsTable;

export async function runningCycle(db: Kysely<Database>): Promise<CycleRow | undefined> {
  return db.selectFrom('crawl_cycles').selectAll().where('status', '=', 'running').executeTakeFirst();
}

export async function latestCycle(db: Kysely<Database>): Promise<CycleRow | undefined> {
  return db.selectFrom('crawl_cycles').selectAll().orderBy('started_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
}

export async function lastCompletedCycle(db: Kysely<Database>): Promise<CycleRow | undefined> {
  return db.selectFrom('crawl_cycles').selectAll().where('status', '=', 'completed').orderBy('completed_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
}

export interface CycleTotals {
  targeted: number;
  completed: number;
  failed: number;
  open: number;
  tweetsIngested: number;
  tweetsUpdated: number;
}

export async function cycleTotals(db: Kysely<Database>, cycleId: string): Promise<CycleTotals> {
  const r = await db
    .selectFrom('crawl_targets')
    .select((eb) => [
      eb.fn.countAll<number>().as('targeted'),
      eb.fn.sum<number>(eb.case().when('status', '=', 'completed').then(1).else(0).end()).as('completed'),
      eb.fn.sum<number>(eb.case().when('status', '=', 'failed').then(1).else(0).end()).as('failed'),
      eb.fn.sum<number>('tweets_ingested').as('ingested'),
      eb.fn.sum<number>('tweets_updated').as('updated'),
    ])
    .where('cycle_id', '=', cycleId)
    .executeTakeFirstOrThrow();
  const n = (v: unknown) => Number(v ?? 0);
  const targeted = n(r.targeted);
  const completed = n(r.completed);
  const failed = n(r.failed);
  return { targeted, completed, failed, open: targeted - completed - failed, tweetsIngested: n(r.ingested), tweetsUpdated: n(r.updated) };
}

/** Takes the running cycle's row lock (a no-op write); false when the cycle is not running. */
async function lockRunning(trx: Transaction<Database>, cycleId: string): Promise<boolean> {
  const r = await trx.updateTable('crawl_cycles').set({ lock_version: sql`lock_version + 1` }).where('id', '=', cycleId).where('status', '=', 'running').executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Inserts targets (and first-seen account rows) for the given accounts, or for every watchlisted account. */
async function insertTargets(trx: Transaction<Database>, cycleId: string, who: 'all' | string[], now: string): Promise<void> {
  const ids = who === 'all' ? undefined : who;
  if (ids && ids.length === 0) return;
  const chunks: Array<string[] | undefined> = ids ? [] : [undefined];
  if (ids) for (let i = 0; i < ids.length; i += 500) chunks.push(ids.slice(i, i + 500));
  let added = 0;
  for (const part of chunks) {
    const ins = await trx
      .insertInto('crawl_targets')
      .columns(['id', 'cycle_id', 'social_user_id', 'status', 'tweets_ingested', 'tweets_updated', 'created_at', 'attempts'])
      .expression((eb) => {
        const q = eb
          .selectFrom('watchlist_entries as w')
          .select([
            sql<string>`cast(${cycleId} as text) || ':' || w.social_user_id`.as('id'),
            sql<string>`cast(${cycleId} as text)`.as('cycle_id'),
            'w.social_user_id',
            sql<string>`cast('pending' as text)`.as('status'),
            sql<number>`0`.as('tweets_ingested'),
            sql<number>`0`.as('tweets_updated'),
            sql<string>`cast(${now} as text)`.as('created_at'),
            sql<number>`0`.as('attempts'),
          ])
          .distinct()
          // Rows that exist are skipped by a read, not by ON CONFLICT: on Postgres a conflict with a
          // row another transaction is updating waits for it, and a worker finishing that account's
          // target waits for the cycle row this transaction holds (a deadlock). The conflict clause
          // stays for rows inserted concurrently. (This WHERE is also what SQLite needs to parse
          // INSERT … SELECT … ON CONFLICT.)
          .where(({ not, exists, selectFrom }) =>
            not(exists(selectFrom('crawl_targets as e').select('e.id').where('e.id', '=', sql<string>`cast(${cycleId} as text) || ':' || w.social_user_id`))),
          );
        return part ? q.where('w.social_user_id', 'in', part) : q;
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    added += Number(ins.numInsertedOrUpdatedRows ?? 0n);
    let acc = trx
      .selectFrom('crawl_targets as t')
      .select(['t.social_user_id', sql<string>`cast(${now} as text)`.as('first_targeted_at')])
      .where('t.cycle_id', '=', cycleId)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('crawl_accounts as e').select('e.social_user_id').whereRef('e.social_user_id', '=', 't.social_user_id'))));
    if (part) acc = acc.where('t.social_user_id', 'in', part);
    await trx
      .insertInto('crawl_accounts')
      .columns(['social_user_id', 'first_targeted_at'])
      .expression(acc)
      .onConflict((oc) => oc.column('social_user_id').doNothing())
      .execute();
  }
  // What was inserted, not a count of the cycle's targets: adding a batch to a large cycle costs the batch.
  if (added > 0) await trx.updateTable('crawl_cycles').set({ accounts_targeted: sql`accounts_targeted + ${added}` }).where('id', '=', cycleId).execute();
}

class NoTargets extends Error {}

/**
 * Starts a cycle over `who`. Returns undefined when another cycle is running (at most one is, by a
 * unique index), when a scheduler elsewhere already started this slot, or when there is nobody to crawl.
 */
export async function startCycle(
  db: Kysely<Database>,
  c: { id: string; trigger: CycleRow['trigger']; slot: number | null; now: string; who: 'all' | string[] },
): Promise<CycleRow | undefined> {
  try {
    return await db.transaction().execute(async (trx) => {
      const ins = await trx
        .insertInto('crawl_cycles')
        .values({ id: c.id, trigger: c.trigger, slot: c.slot, status: 'running', started_at: c.now, completed_at: null, accounts_targeted: 0, accounts_completed: 0, accounts_failed: 0, tweets_ingested: 0, tweets_updated: 0, lock_version: 0 })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      if (Number(ins.numInsertedOrUpdatedRows ?? 0) !== 1) return undefined;
      await insertTargets(trx, c.id, c.who, c.now);
      const row = await trx.selectFrom('crawl_cycles').selectAll().where('id', '=', c.id).executeTakeFirstOrThrow();
      if (row.accounts_targeted === 0) throw new NoTargets();
      return row;
    });
  } catch (err) {
    if (err instanceof NoTargets) return undefined;
    throw err;
  }
}

/** Adds accounts to the running cycle; false when it is no longer running. */
export async function addTargets(db: Kysely<Database>, cycleId: string, userIds: string[], now: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (!(await lockRunning(trx, cycleId))) return false;
    await insertTargets(trx, cycleId, userIds, now);
    return true;
  });
}

/**
 * Whether the watchlist may have gained accounts since `since` (the service clock's time of a look):
 * a batch is open (it adds entries as it goes) or one finished at or after that time. Two index
 * probes (status, completed_at).
 */
export async function watchlistMayHaveChanged(db: Kysely<Database>, since: string): Promise<boolean> {
  const open = await db.selectFrom('watchlist_batches').select('id').where('status', 'in', ['queued', 'processing']).limit(1).executeTakeFirst();
  if (open) return true;
  const finished = await db.selectFrom('watchlist_batches').select('id').where('completed_at', '>=', since).limit(1).executeTakeFirst();
  return finished !== undefined;
}

/** Watchlisted accounts that were never targeted by any cycle: they await their first crawl. */
export async function untargetedAccounts(db: Kysely<Database>, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('watchlist_entries as w')
    .leftJoin('crawl_accounts as c', 'c.social_user_id', 'w.social_user_id')
    .select('w.social_user_id')
    .distinct()
    .where('c.social_user_id', 'is', null)
    .limit(limit)
    .execute();
  return rows.map((r) => r.social_user_id);
}

export async function anyWatchlisted(db: Kysely<Database>): Promise<boolean> {
  return (await db.selectFrom('watchlist_entries').select('social_user_id').limit(1).executeTakeFirst()) !== undefined;
}

/** Whether any target of the cycle is still pending or running: one probe of (cycle_id, status). */
async function anyOpenTarget(db: Kysely<Database>, cycleId: string): Promise<boolean> {
  const r = await db.selectFrom('crawl_targets').select('id').where('cycle_id', '=', cycleId).where('status', 'in', ['pending', 'running']).limit(1).executeTakeFirst();
  return r !== undefined;
}

/** Completes the cycle when none of its targets is open; its totals are the sums of the targets. */
export async function tryFinalizeCycle(db: Kysely<Database>, cycleId: string, now: string): Promise<boolean> {
  // A read first: while accounts remain (the usual case) no write lock is taken. An index probe, not
  // the totals: the scheduler asks every poll, and summing every target each time made a cycle's
  // cost grow with the square of its accounts.
  if (await anyOpenTarget(db, cycleId)) return false;
  return db.transaction().execute(async (trx) => {
    if (!(await lockRunning(trx, cycleId))) return false;
    const t = await cycleTotals(trx, cycleId);
    if (t.open > 0) return false;
    await trx
      .updateTable('crawl_cycles')
      .set({
        status: 'completed',
        completed_at: now,
        accounts_targeted: t.targeted,
        accounts_completed: t.completed,
        accounts_failed: t.failed,
        tweets_ingested: t.tweetsIngested,
        tweets_updated: t.tweetsUpdated,
      })
      .where('id', '=', cycleId)
      .execute();
    return true;
  });
}

export async function findTarget(db: Kysely<Database>, id: string): Promise<TargetRow | undefined> {
  return db.selectFrom('crawl_targets').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function accountState(db: Kysely<Database>, userId: string): Promise<AccountState | undefined> {
  return db.selectFrom('crawl_accounts').selectAll().where('social_user_id', '=', userId).executeTakeFirst();
}


/** Whether any account's watchlist holds this social account (an index probe). */
export async function isWatched(db: Kysely<Database>, userId: string): Promise<boolean> {
  return (await db.selectFrom('watchlist_entries').select('account_id').where('social_user_id', '=', userId).limit(1).executeTakeFirst()) !== undefined;
}

/**
 * Drops a target whose account no watchlist holds any more (removed after its cycle began), before
 * any of its work: not crawled for nobody (with X, paid calls), and the cycle counts one account
 * fewer. False, and left to crawl, when it is watched again, has stored tweets of an earlier
 * attempt (the cycle's running counters hold them), or the lease is no longer this worker's.
 */
export async function dropUnwatchedTarget(db: Kysely<Database>, claim: Claim, userId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    try {
      await holdLease(trx, targetLease, claim);
    } catch {
      return false;
    }
    if (await isWatched(trx, userId)) return false;
    const t = await trx.selectFrom('crawl_targets').select(['cycle_id', 'tweets_ingested', 'tweets_updated']).where('id', '=', claim.id).executeTakeFirst();
    if (!t || Number(t.tweets_ingested) > 0 || Number(t.tweets_updated) > 0) return false;
    await trx.deleteFrom('crawl_targets').where('id', '=', claim.id).execute();
    await trx.updateTable('crawl_cycles').set({ accounts_targeted: sql`accounts_targeted - 1` }).where('id', '=', t.cycle_id).execute();
    // Never crawled: forgotten, so that if it is watched again its first crawl starts as soon as the
    // batch completes (untargetedAccounts), not at the next cycle.
    await trx.deleteFrom('crawl_accounts').where('social_user_id', '=', userId).where('last_crawled_at', 'is', null).execute();
    return true;
  });
}

export async function markTargetStarted(db: Kysely<Database>, claim: Claim, now: string): Promise<void> {
  await db.updateTable('crawl_targets').set({ started_at: now }).where('id', '=', claim.id).where('lease_owner', '=', claim.owner).where('started_at', 'is', null).execute();
}

/** Ends the target (completed or failed) and, on success, moves the account's crawl position. */
export async function finishTarget(
  db: Kysely<Database>,
  claim: Claim,
  r: { status: 'completed' | 'failed'; error: string | null; now: string; userId: string; newest?: { id: string; createdAt: string } },
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    try {
      await holdLease(trx, targetLease, claim);
    } catch {
      return false;
    }
    await trx
      .updateTable('crawl_targets')
      .set({ status: r.status, error: r.error, completed_at: r.now, lease_owner: null, lease_expires_at: null })
      .where('id', '=', claim.id)
      .execute();
    if (r.status === 'completed') {
      const patch: Partial<AccountState> = { last_crawled_at: r.now };
      if (r.newest) {
        patch.last_tweet_id = r.newest.id;
        patch.last_tweet_at = r.newest.createdAt;
      }
      await trx.updateTable('crawl_accounts').set(patch).where('social_user_id', '=', r.userId).execute();
    }
    const done = r.status === 'completed' ? 'accounts_completed' : 'accounts_failed';
    await trx
      .updateTable('crawl_cycles')
      .set({ [done]: sql`${sql.ref(done)} + 1` })
      .where('id', '=', (eb) => eb.selectFrom('crawl_targets').select('cycle_id').where('id', '=', claim.id))
      .execute();
    return true;
  });
}
