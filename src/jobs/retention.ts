// Retention: deletes the rows that would otherwise grow for ever. Finished watchlist batches (and
// their items) after BATCH_RETENTION_DAYS; idempotency rows once their replay window has passed;
// completed crawl cycles (and their per-account targets) after CRAWL_RETENTION_DAYS, always keeping
// the latest completed cycle (crawl-status shows it) and any cycle of the last two crawl intervals
// (a cycle's slot must stay taken while the scheduler could still start it). Rows are deleted in
// small chunks, each its own short transaction, so the API and the workers are never held up long.
// Unfinished jobs are never touched. The ledger is money and is kept; export files have their own
// retention (the object store's).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { JobDeps } from './job-deps.js';
import type { PeriodicTask } from './runner.js';
import type { Log } from './runner.js';

const CHUNK = 500;
const DAY = 86_400_000;

export interface RetentionCounts {
  batches: number;
  batchItems: number;
  idempotencyKeys: number;
  crawlCycles: number;
  crawlTargets: number;
}

const affected = (r: { numDeletedRows?: bigint } | { numAffectedRows?: bigint }): number =>
  Number(('numDeletedRows' in r ? r.numDeletedRows : 'numAffectedRows' in r ? r.numAffectedRows : 0n) ?? 0n);

/** Deletes one chunk of finished batches older than `cutoff` with their items. */
async function batchChunk(db: Kysely<Database>, cutoff: string): Promise<{ batches: number; items: number }> {
  return db.transaction().execute(async (trx) => {
    const ids = (
      await trx
        .selectFrom('watchlist_batches')
        .select('id')
        .where('status', 'in', ['completed', 'failed'])
        .where('completed_at', '<', cutoff)
        .limit(CHUNK)
        .execute()
    ).map((r) => r.id);
    if (ids.length === 0) return { batches: 0, items: 0 };
    const items = await trx.deleteFrom('watchlist_batch_items').where('batch_id', 'in', ids).executeTakeFirst();
    const batches = await trx.deleteFrom('watchlist_batches').where('id', 'in', ids).where('status', 'in', ['completed', 'failed']).executeTakeFirst();
    return { batches: affected(batches), items: affected(items) };
  });
}

async function idempotencyChunk(db: Kysely<Database>, cutoff: string): Promise<number> {
  const r = await sql`
    delete from idempotency_keys where (account_id, key) in (
      select account_id, key from idempotency_keys where created_at < ${cutoff} limit ${CHUNK})`.execute(db);
  return Number(r.numAffectedRows ?? 0n);
}

/** Deletes one chunk of old completed cycles (never `keep`) with their targets. */
async function cycleChunk(db: Kysely<Database>, cutoff: string, keep: string): Promise<{ cycles: number; targets: number }> {
  return db.transaction().execute(async (trx) => {
    const ids = (
      await trx
        .selectFrom('crawl_cycles')
        .select('id')
        .where('status', '=', 'completed')
        .where('completed_at', '<', cutoff)
        .where('id', '!=', keep)
        .limit(20)
        .execute()
    ).map((r) => r.id);
    if (ids.length === 0) return { cycles: 0, targets: 0 };
    const targets = await trx.deleteFrom('crawl_targets').where('cycle_id', 'in', ids).executeTakeFirst();
    const cycles = await trx.deleteFrom('crawl_cycles').where('id', 'in', ids).executeTakeFirst();
    return { cycles: affected(cycles), targets: affected(targets) };
  });
}

/** One retention pass over every table, until nothing old is left. */
export async function runRetention(deps: Pick<JobDeps, 'store' | 'config' | 'bulk'>, signal?: AbortSignal): Promise<RetentionCounts> {
  const db = deps.store.db;
  const r = deps.config.retention;
  const now = deps.bulk.clock().getTime();
  const out: RetentionCounts = { batches: 0, batchItems: 0, idempotencyKeys: 0, crawlCycles: 0, crawlTargets: 0 };

  const batchCutoff = new Date(now - r.batchDays * DAY).toISOString();
  for (;;) {
    signal?.throwIfAborted();
    const c = await batchChunk(db, batchCutoff);
    out.batches += c.batches;
    out.batchItems += c.items;
    if (c.batches < CHUNK) break;
  }

  // Past its TTL an idempotency row is never replayed (a returning key starts afresh), so it can go.
  const idemCutoff = new Date(now - deps.config.idempotencyTtlHours * 3_600_000).toISOString();
  for (;;) {
    signal?.throwIfAborted();
    const n = await idempotencyChunk(db, idemCutoff);
    out.idempotencyKeys += n;
    if (n < CHUNK) break;
  }

  const latest = await db.selectFrom('crawl_cycles').select('id').where('status', '=', 'completed').orderBy('completed_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
  if (latest) {
    const intervalMs = deps.config.crawl.intervalHours * 3_600_000;
    const crawlCutoff = new Date(Math.min(now - r.crawlDays * DAY, now - 2 * intervalMs)).toISOString();
    for (;;) {
      signal?.throwIfAborted();
      const c = await cycleChunk(db, crawlCutoff, latest.id);
      out.crawlCycles += c.cycles;
      out.crawlTargets += c.targets;
      if (c.cycles === 0) break;
    }
  }
  return out;
}

/** The scheduler's periodic retention pass: at most once every RETENTION_INTERVAL_MINUTES, logged with its counts. */
export function retentionTask(deps: Pick<JobDeps, 'store' | 'config' | 'bulk'>, log: Log): PeriodicTask {
  let last = -Infinity;
  return {
    name: 'retention',
    async run(signal) {
      const now = Date.now();
      if (now - last < deps.config.retention.intervalMinutes * 60_000) return;
      last = now;
      const t0 = Date.now();
      log.info({ job: 'retention' }, 'retention started');
      const counts = await runRetention(deps, signal);
      log.info({ job: 'retention', ...counts, ms: Date.now() - t0 }, 'retention finished');
    },
  };
}
