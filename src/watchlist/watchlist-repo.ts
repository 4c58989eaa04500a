// Watchlist entries and the per-account entry count that enforces the plan's limit.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, WatchlistEntriesTable } from '../db/schema.js';

export interface WatchlistPosition {
  addedAt: string;
  id: string;
}

/** Newest first, keyset on (added_at, social_user_id); `limit + 1` rows tell whether a next page exists. */
export async function watchlistPage(db: Kysely<Database>, accountId: string, limit: number, before?: WatchlistPosition): Promise<WatchlistEntriesTable[]> {
  let q = db.selectFrom('watchlist_entries').selectAll().where('account_id', '=', accountId);
  if (before) q = q.where((eb) => eb(eb.refTuple('added_at', 'social_user_id'), '<', eb.tuple(before.addedAt, before.id)));
  return q.orderBy('added_at', 'desc').orderBy('social_user_id', 'desc').limit(limit + 1).execute();
}

export async function watchlistSize(db: Kysely<Database>, accountId: string): Promise<number> {
  const r = await db.selectFrom('watchlist_counts').select('entries').where('account_id', '=', accountId).executeTakeFirst();
  return r?.entries ?? 0;
}

/** The account's entry with this id, or (if none is given) with this username as stored, in any case. */
export async function listedEntry(db: Kysely<Database>, accountId: string, item: { socialUserId: string | null; username: string | null }): Promise<{ social_user_id: string; username: string } | undefined> {
  let q = db.selectFrom('watchlist_entries').select(['social_user_id', 'username']).where('account_id', '=', accountId);
  if (item.socialUserId !== null) q = q.where('social_user_id', '=', item.socialUserId);
  else if (item.username !== null) q = q.where((eb) => eb(eb.fn('lower', ['username']), '=', item.username!.toLowerCase()));
  else return undefined;
  return q.limit(1).executeTakeFirst();
}

export type AddOutcome = 'added' | 'already_present' | 'limit_exceeded';

/** Inside the caller's transaction: adds one entry unless present or over `limit` (atomic under concurrency). */
export async function addEntry(
  trx: Transaction<Database>,
  e: { accountId: string; userId: string; username: string; addedAt: string; limit: number },
): Promise<AddOutcome> {
  await trx.insertInto('watchlist_counts').values({ account_id: e.accountId, entries: 0 }).onConflict((oc) => oc.column('account_id').doNothing()).execute();
  const ins = await trx
    .insertInto('watchlist_entries')
    .values({ account_id: e.accountId, social_user_id: e.userId, username: e.username, added_at: e.addedAt })
    .onConflict((oc) => oc.columns(['account_id', 'social_user_id']).doNothing())
    .executeTakeFirst();
  if (Number(ins.numInsertedOrUpdatedRows ?? 0) === 0) return 'already_present';
  const inc = await trx
    .updateTable('watchlist_counts')
    .set({ entries: sql`entries + 1` })
    .where('account_id', '=', e.accountId)
    .where('entries', '<', e.limit)
    .executeTakeFirst();
  if (Number(inc.numUpdatedRows) === 1) return 'added';
  await trx.deleteFrom('watchlist_entries').where('account_id', '=', e.accountId).where('social_user_id', '=', e.userId).execute();
  return 'limit_exceeded';
}

/** Inside the caller's transaction: removes one entry; its username, or undefined when it was not there. */
export async function removeEntry(trx: Transaction<Database>, accountId: string, userId: string): Promise<{ username: string } | undefined> {
  const del = await trx.deleteFrom('watchlist_entries').where('account_id', '=', accountId).where('social_user_id', '=', userId).returning('username').executeTakeFirst();
  if (!del) return undefined;
  await trx.updateTable('watchlist_counts').set({ entries: sql`entries - 1` }).where('account_id', '=', accountId).execute();
  return del;
}
