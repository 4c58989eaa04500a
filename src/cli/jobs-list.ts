// `sdg jobs list`: the newest background jobs of every account, for an operator looking for what
// failed or what is stuck: watchlist batches, exports and crawl cycles, newest first. Each status is
// read through its (status, created_at) index and the lists merged, so a store of millions of jobs
// is not sorted whole.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export type JobKind = 'batch' | 'export' | 'cycle';
export const JOB_KINDS: JobKind[] = ['batch', 'export', 'cycle'];

/** The statuses each kind's jobs take. */
export const JOB_STATUSES: Record<JobKind, string[]> = {
  batch: ['queued', 'processing', 'completed', 'failed'],
  export: ['queued', 'running', 'completed', 'failed'],
  cycle: ['running', 'completed'],
};

export interface JobRow {
  kind: JobKind;
  id: string;
  /** The account whose job it is (none for a crawl cycle, which serves all). */
  accountId: string | null;
  status: string;
  createdAt: string;
  completedAt: string | null;
  attempts: number | null;
  error: string | null;
}

export interface JobFilter {
  kinds: JobKind[];
  status?: string | undefined;
  accountId?: string | undefined;
  limit: number;
}

export async function listJobs(db: Kysely<Database>, f: JobFilter): Promise<JobRow[]> {
  const rows: JobRow[] = [];
  for (const kind of f.kinds) {
    const statuses = f.status === undefined ? JOB_STATUSES[kind] : JOB_STATUSES[kind].filter((s) => s === f.status);
    // A crawl cycle belongs to no account.
    if (kind === 'cycle' && f.accountId !== undefined) continue;
    for (const status of statuses) rows.push(...(await newest(db, kind, status, f)));
  }
  // Newest first, then by id for the same instant.
  rows.sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1));
  return rows.slice(0, f.limit);
}

/** A status's batches or exports, newest first: the statement itself, so that a test can read its plan. */
export function accountJobsQuery(db: Kysely<Database>, kind: 'batch' | 'export', status: string, f: Pick<JobFilter, 'accountId' | 'limit'>) {
  // Batches and exports keep the same columns under the same names; each table has an index that
  // reads one status newest first, of every account or of one.
  const table = kind === 'batch' ? 'watchlist_batches' : 'exports';
  let q = db.selectFrom(table as 'exports').select(['id', 'account_id', 'status', 'created_at', 'completed_at', 'attempts', 'error']).where('status', '=', status as 'queued');
  if (f.accountId !== undefined) q = q.where('account_id', '=', f.accountId);
  return q.orderBy('created_at', 'desc').limit(f.limit);
}

async function newest(db: Kysely<Database>, kind: JobKind, status: string, f: JobFilter): Promise<JobRow[]> {
  if (kind !== 'cycle') {
    const r = await accountJobsQuery(db, kind, status, f).execute();
    return r.map((x) => ({ kind, id: x.id, accountId: x.account_id, status: x.status, createdAt: x.created_at, completedAt: x.completed_at, attempts: x.attempts, error: x.error }));
  }
  const r = await db
    .selectFrom('crawl_cycles')
    .select(['id', 'status', 'started_at', 'completed_at', 'accounts_failed'])
    .where('status', '=', status as 'running')
    .orderBy('started_at', 'desc')
    .limit(f.limit)
    .execute();
  return r.map((x) => ({ kind, id: x.id, accountId: null, status: x.status, createdAt: x.started_at, completedAt: x.completed_at, attempts: null, error: Number(x.accounts_failed) > 0 ? `${x.accounts_failed} accounts failed` : null }));
}
