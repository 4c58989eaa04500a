// Export records, the authors each export may contain (the caller's watchlist when it was asked
// for), and the keyset read of the tweets that go into the file.
import { sql, type Kysely } from 'kysely';
import type { LeaseSpec, Claim } from '../jobs/lease.js';
import { assertOpenJobRoom, type OpenJobQuota } from '../jobs/job-quota.js';
import type { Database, ExportsTable } from '../db/schema.js';

export const exportLease: LeaseSpec = { table: 'exports', ready: 'queued', active: 'running' };
export type ExportRow = ExportsTable;

export const exportObjectKey = (accountId: string, id: string): string => `exports/${accountId}/${id}.jsonl.gz`;

/** Creates the export (queued) and snapshots the caller's watchlist into export_authors, atomically. */
export const queuedExportQuota = (limit: number): OpenJobQuota => ({
  table: 'exports',
  open: ['queued', 'running'],
  limit,
  noun: 'exports',
  hint: 'wait for one to complete (GET /social/v1/bulk-export/exports/{id}) before requesting another.',
});

/** `maxOpen`: exports (queued or running) the account may have; none created beyond it. */
export async function createExport(
  db: Kysely<Database>,
  e: { id: string; accountId: string; start: string; end: string; now: string },
  maxOpen?: number,
): Promise<ExportRow> {
  const row: ExportRow = {
    id: e.id,
    account_id: e.accountId,
    status: 'queued',
    start_date: e.start,
    end_date: e.end,
    format: 'jsonl.gz',
    tweet_count: null,
    size_bytes: null,
    sha256: null,
    object_key: exportObjectKey(e.accountId, e.id),
    created_at: e.now,
    started_at: null,
    completed_at: null,
    error: null,
    attempts: 0,
    lease_owner: null,
    lease_expires_at: null,
    expired_at: null,
    object_removed_at: null,
  };
  await db.transaction().execute(async (trx) => {
    if (maxOpen !== undefined) await assertOpenJobRoom(trx, e.accountId, queuedExportQuota(maxOpen));
    await trx.insertInto('exports').values(row).execute();
    await trx
      .insertInto('export_authors')
      .columns(['export_id', 'author_id'])
      .expression((eb) => eb.selectFrom('watchlist_entries').select([sql<string>`cast(${e.id} as text)`.as('export_id'), 'social_user_id']).where('account_id', '=', e.accountId))
      .execute();
  });
  return row;
}

export async function findExport(db: Kysely<Database>, id: string): Promise<ExportRow | undefined> {
  return db.selectFrom('exports').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findAccountExport(db: Kysely<Database>, accountId: string, id: string): Promise<ExportRow | undefined> {
  return db.selectFrom('exports').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
}

export async function latestCompletedExport(db: Kysely<Database>, accountId: string): Promise<ExportRow | undefined> {
  return db
    .selectFrom('exports')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('status', '=', 'completed')
    // One whose file retention removed cannot be downloaded: "latest, then download" gets a file.
    .where('expired_at', 'is', null)
    .orderBy('completed_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export interface ExportPosition {
  createdAt: string;
  id: string;
}

/** Newest first, keyset on (created_at, id); `limit + 1` rows. */
export async function exportsPage(db: Kysely<Database>, accountId: string, limit: number, before?: ExportPosition): Promise<ExportRow[]> {
  let q = db.selectFrom('exports').selectAll().where('account_id', '=', accountId);
  if (before) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)));
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
}

export async function markExportStarted(db: Kysely<Database>, claim: Claim, now: string): Promise<void> {
  await db.updateTable('exports').set({ started_at: now }).where('id', '=', claim.id).where('lease_owner', '=', claim.owner).where('started_at', 'is', null).execute();
}

export async function completeExport(
  db: Kysely<Database>,
  claim: Claim,
  r: { tweetCount: number; sizeBytes: number; sha256: string; now: string },
): Promise<boolean> {
  const res = await db
    .updateTable('exports')
    .set({ status: 'completed', tweet_count: r.tweetCount, size_bytes: r.sizeBytes, sha256: r.sha256, completed_at: r.now, error: null, lease_owner: null, lease_expires_at: null })
    .where('id', '=', claim.id)
    .where('lease_owner', '=', claim.owner)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function failExport(db: Kysely<Database>, claim: Claim, error: string, now: string): Promise<void> {
  await db
    .updateTable('exports')
    .set({ status: 'failed', error, completed_at: now, lease_owner: null, lease_expires_at: null })
    .where('id', '=', claim.id)
    .where('lease_owner', '=', claim.owner)
    .where('status', '=', 'running')
    .execute();
}

/**
 * After a failed attempt: the export stays `running` under a lease that ends at `retryAtMs`, when any
 * worker may claim it for the next attempt (as it would after a crash), and none before.
 */
export async function retryExportAt(db: Kysely<Database>, claim: Claim, retryAtMs: number): Promise<void> {
  await db
    .updateTable('exports')
    .set({ lease_expires_at: new Date(retryAtMs).toISOString() })
    .where('id', '=', claim.id)
    .where('lease_owner', '=', claim.owner)
    .where('status', '=', 'running')
    .execute();
}

export interface TweetPosition {
  createdAt: string;
  seq: string;
}

/**
 * How to read an export's tweets:
 *  - 'by_author': for each author, its tweets of the window by (author_id, created_at), then sorted:
 *    cheap for small watchlists; each query costs a seek per author and a sort of the window's rows;
 *  - 'by_time': every tweet of the range in (created_at, seq) order, keeping the authors' ones:
 *    no sort at all; cheap when the watchlist's tweets are a good share of the range.
 * Both counts come from covering indexes, so choosing costs little next to the export itself.
 */
export type ExportScan = 'by_author' | 'by_time';

export async function chooseExportScan(db: Kysely<Database>, e: { id: string; start: string; end: string }, pageSize: number): Promise<ExportScan> {
  const count = (v: unknown) => Number(v ?? 0);
  const authors = count(
    (await db.selectFrom('export_authors').select((eb) => eb.fn.countAll().as('n')).where('export_id', '=', e.id).executeTakeFirstOrThrow()).n,
  );
  if (authors <= 1) return 'by_author';
  const inRange = count(
    (await db.selectFrom('tweets').select((eb) => eb.fn.countAll().as('n')).where('created_at', '>=', e.start).where('created_at', '<', e.end).executeTakeFirstOrThrow()).n,
  );
  const matching = count(
    (
      await db
        .selectFrom('tweets as t')
        .innerJoin('export_authors as a', (j) => j.onRef('a.author_id', '=', 't.author_id').on('a.export_id', '=', e.id))
        .select((eb) => eb.fn.countAll().as('n'))
        .where('t.created_at', '>=', e.start)
        .where('t.created_at', '<', e.end)
        .executeTakeFirstOrThrow()
    ).n,
  );
  // Index seeks: one per author per query (about two queries a page) against one per tweet of the range.
  const byAuthor = authors * (2 * Math.ceil(matching / pageSize) + 8) + matching;
  return inRange <= byAuthor ? 'by_time' : 'by_author';
}

/**
 * One page of an export's tweets, oldest first by (created_at, seq): created in [from, until), after
 * the keyset position `after` if given, by one of the export's authors.
 */
export async function exportTweetsPage(
  db: Kysely<Database>,
  exportId: string,
  scan: ExportScan,
  w: { from: string; until: string; after?: TweetPosition },
  limit: number,
): Promise<Array<{ created_at: string; seq: string; data: string }>> {
  // A CROSS JOIN keeps tweets as SQLite's outer loop (read in created_at order); Postgres plans both alike.
  let q =
    scan === 'by_time'
      ? db.selectFrom('tweets as t').crossJoin('export_authors as a').where('a.export_id', '=', exportId).whereRef('a.author_id', '=', 't.author_id')
      : db.selectFrom('tweets as t').innerJoin('export_authors as a', (j) => j.onRef('a.author_id', '=', 't.author_id').on('a.export_id', '=', exportId));
  q = q.where('t.created_at', '>=', w.from).where('t.created_at', '<', w.until);
  const after = w.after;
  if (after) q = q.where((eb) => eb(eb.refTuple('t.created_at', 't.seq'), '>', eb.tuple(after.createdAt, after.seq)));
  return q.select(['t.created_at', 't.seq', 't.data']).orderBy('t.created_at').orderBy('t.seq').limit(limit).execute();
}
