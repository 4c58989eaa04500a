// How many jobs the store holds waiting and held, per kind: the backlog an operator alerts on (a
// queue that only grows means too few workers, or none). Read from the store when /metrics is read,
// so every process that serves /metrics reports the whole deployment's figures.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { LeaseSpec } from './lease.js';
import { exportLease } from '../exports/export-repo.js';
import { batchLease } from '../watchlist/batch-repo.js';
import { targetLease } from '../crawl/crawl-repo.js';

/** The job kinds whose rows wait in the store, by the runner's names. */
export const LEASED_KINDS: ReadonlyArray<{ kind: string; spec: LeaseSpec }> = [
  { kind: 'watchlist_batch', spec: batchLease },
  { kind: 'export', spec: exportLease },
  { kind: 'crawl_target', spec: targetLease },
];

export interface Backlog {
  kind: string;
  /** Rows waiting for a worker. */
  waiting: number;
  /** Rows a worker holds (or held, until its lease expires and another takes them). */
  held: number;
}

/** One indexed count per kind (each table has an index on (status, created_at)). */
export async function readBacklog(db: Kysely<Database>): Promise<Backlog[]> {
  const out: Backlog[] = [];
  for (const { kind, spec } of LEASED_KINDS) {
    const r = await sql<{ status: string; n: number | string }>`
      select status, count(*) as n from ${sql.table(spec.table)} where status in (${spec.ready}, ${spec.active}) group by status`.execute(db);
    const of = (status: string) => Number(r.rows.find((x) => x.status === status)?.n ?? 0);
    out.push({ kind, waiting: of(spec.ready), held: of(spec.active) });
  }
  return out;
}
