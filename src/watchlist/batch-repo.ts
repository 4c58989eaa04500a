// Watchlist batches and their items. An item's outcome, the watchlist change it implies and the
// batch's counters are written in one transaction, conditioned on the worker still holding the
// batch's lease, so a batch resumed after a crash never applies an item twice.
import { sql, type Kysely } from 'kysely';
import { holdLease, type Claim, type LeaseSpec } from '../jobs/lease.js';
import type { Database, WatchlistBatchesTable, WatchlistBatchItemsTable } from '../db/schema.js';
import { addEntry, removeEntry } from './watchlist-repo.js';
import { assertOpenJobRoom, type OpenJobQuota } from '../jobs/job-quota.js';

export const batchLease: LeaseSpec = { table: 'watchlist_batches', ready: 'queued', active: 'processing', serialBy: 'account_id' };

export type ItemStatus = WatchlistBatchItemsTable['status'];
export type BatchRow = WatchlistBatchesTable;
export type ItemRow = WatchlistBatchItemsTable;

/** Outcomes that leave the watchlist as the caller asked; the others count as failed. */
const SUCCEEDED: ReadonlySet<ItemStatus> = new Set(['added', 'already_present', 'removed', 'not_present']);

export const openBatchQuota = (limit: number): OpenJobQuota => ({
  table: 'watchlist_batches',
  open: ['queued', 'processing'],
  limit,
  noun: 'watchlist batches',
  hint: 'wait for one to complete (GET /social/v1/bulk-export/watchlist/batch/{batchId}), or send up to 100 items in one batch.',
});

export async function createBatch(
  db: Kysely<Database>,
  b: { id: string; accountId: string; operation: 'add' | 'remove'; items: Array<{ socialUserId: string | null; username: string | null }>; now: string },
  /** Open batches (queued or processing) the account may have; none created beyond it. */
  maxOpen?: number,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (maxOpen !== undefined) await assertOpenJobRoom(trx, b.accountId, openBatchQuota(maxOpen));
    // An account's batches run in the order of created_at (lease.ts, serialBy): two sent within one
    // millisecond get distinct times, the later one a millisecond on (the account's row is locked above).
    const last = await trx.selectFrom('watchlist_batches').select((eb) => eb.fn.max('created_at').as('at')).where('account_id', '=', b.accountId).executeTakeFirst();
    const createdAt = last?.at && last.at >= b.now ? new Date(Date.parse(last.at) + 1).toISOString() : b.now;
    await trx
      .insertInto('watchlist_batches')
      .values({
        id: b.id,
        account_id: b.accountId,
        operation: b.operation,
        status: 'queued',
        total: b.items.length,
        processed: 0,
        succeeded: 0,
        failed: 0,
        created_at: createdAt,
        completed_at: null,
        error: null,
        attempts: 0,
        lease_owner: null,
        lease_expires_at: null,
      })
      .execute();
    await trx
      .insertInto('watchlist_batch_items')
      .values(b.items.map((it, position) => ({ batch_id: b.id, position, social_user_id: it.socialUserId, username: it.username, status: 'pending' as const, error: null })))
      .execute();
  });
}

export async function findBatch(db: Kysely<Database>, id: string): Promise<BatchRow | undefined> {
  return db.selectFrom('watchlist_batches').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function batchItems(db: Kysely<Database>, id: string): Promise<ItemRow[]> {
  return db.selectFrom('watchlist_batch_items').selectAll().where('batch_id', '=', id).orderBy('position').execute();
}


export type Resolution =
  | { kind: 'add'; userId: string; username: string; limit: number }
  | { kind: 'remove'; userId: string }
  | { kind: 'outcome'; status: 'not_found' | 'failed' | 'limit_exceeded'; error: string; userId?: string; username?: string };

/** Applies one item: the watchlist change, the item's outcome and the batch's counters, atomically. */
export async function applyItem(db: Kysely<Database>, claim: Claim, accountId: string, position: number, r: Resolution, now: string): Promise<ItemStatus> {
  return db.transaction().execute(async (trx) => {
    await holdLease(trx, batchLease, claim);
    const item = await trx.selectFrom('watchlist_batch_items').select('status').where('batch_id', '=', claim.id).where('position', '=', position).executeTakeFirst();
    if (!item) throw new Error(`Batch ${claim.id} has no item ${position}.`);
    if (item.status !== 'pending') return item.status; // applied before a crash: nothing to do again
    let status: ItemStatus;
    let error: string | null = null;
    const patch: { social_user_id?: string; username?: string } = {};
    if (r.kind === 'add') {
      status = await addEntry(trx, { accountId, userId: r.userId, username: r.username, addedAt: now, limit: r.limit });
      if (status === 'limit_exceeded') error = `The watchlist is full: the plan allows ${r.limit} accounts.`;
      patch.social_user_id = r.userId;
      patch.username = r.username;
    } else if (r.kind === 'remove') {
      // The removed account's username, as an add's item has it (a remove names ids only).
      const removed = await removeEntry(trx, accountId, r.userId);
      status = removed ? 'removed' : 'not_present';
      if (removed) patch.username = removed.username;
    } else {
      status = r.status;
      error = r.error;
      if (r.userId) patch.social_user_id = r.userId;
      if (r.username) patch.username = r.username;
    }
    await trx.updateTable('watchlist_batch_items').set({ status, error, ...patch }).where('batch_id', '=', claim.id).where('position', '=', position).execute();
    const ok = SUCCEEDED.has(status);
    await trx
      .updateTable('watchlist_batches')
      .set({ processed: sql`processed + 1`, succeeded: ok ? sql`succeeded + 1` : sql`succeeded`, failed: ok ? sql`failed` : sql`failed + 1` })
      .where('id', '=', claim.id)
      .execute();
    return status;
  });
}

export async function completeBatch(db: Kysely<Database>, claim: Claim, now: string): Promise<boolean> {
  const r = await db
    .updateTable('watchlist_batches')
    .set({ status: 'completed', completed_at: now, lease_owner: null, lease_expires_at: null })
    .where('id', '=', claim.id)
    .where('lease_owner', '=', claim.owner)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Gives up on a batch: its pending items fail with `error` and the batch is `failed`. */
export async function failBatch(db: Kysely<Database>, claim: Claim, error: string, now: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await holdLease(trx, batchLease, claim);
    const pending = await trx
      .updateTable('watchlist_batch_items')
      .set({ status: 'failed', error })
      .where('batch_id', '=', claim.id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    const n = Number(pending.numUpdatedRows);
    await trx
      .updateTable('watchlist_batches')
      .set({ status: 'failed', error, completed_at: now, processed: sql`processed + ${n}`, failed: sql`failed + ${n}`, lease_owner: null, lease_expires_at: null })
      .where('id', '=', claim.id)
      .execute();
  });
}
