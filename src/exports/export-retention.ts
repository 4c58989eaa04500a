// Export retention: completed exports older than EXPORT_RETENTION_DAYS lose their file; their records
// stay, marked expired, and their download answers 404 export_expired. The state lives in the rows,
// in two steps, so a sweep that dies half-way is finished by the next one (in any process):
//  1. mark: one conditional UPDATE sets expired_at on every completed export past the cutoff (the
//     download stops at once, before any file disappears under a client);
//  2. remove: each expired export whose file is still there has it deleted (idempotent), then
//     object_removed_at set. Several schedulers may sweep at once: both steps are safe to repeat.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ObjectStore } from '../objects/object-store.js';

const REMOVE_BATCH = 100;
/** How often a scheduler sweeps; retention is counted in days, so a minute late is nothing. */
export const RETENTION_SWEEP_MS = 60_000;

export interface RetentionResult {
  /** Exports marked expired by this sweep. */
  expired: number;
  /** Files removed by this sweep (including ones an interrupted sweep had marked). */
  removed: number;
}

export interface RetentionDeps {
  db: Kysely<Database>;
  objects: ObjectStore;
  retentionDays: number;
  now: Date;
  signal?: AbortSignal;
}

/** Runs both steps to the end; retentionDays 0 keeps every export. */
export async function sweepExpiredExports(d: RetentionDeps): Promise<RetentionResult> {
  if (d.retentionDays <= 0) return { expired: 0, removed: 0 };
  const now = d.now.toISOString();
  const cutoff = new Date(d.now.getTime() - d.retentionDays * 86_400_000).toISOString();
  const marked = await d.db
    .updateTable('exports')
    .set({ expired_at: now })
    .where('status', '=', 'completed')
    .where('expired_at', 'is', null)
    .where('completed_at', '<', cutoff)
    .executeTakeFirst();
  let removed = 0;
  for (;;) {
    d.signal?.throwIfAborted();
    const due = await d.db
      .selectFrom('exports')
      .select(['id', 'object_key'])
      .where('object_removed_at', 'is', null)
      .where('expired_at', 'is not', null)
      .orderBy('expired_at')
      .limit(REMOVE_BATCH)
      .execute();
    for (const row of due) {
      await d.objects.delete(row.object_key);
      const r = await d.db.updateTable('exports').set({ object_removed_at: now }).where('id', '=', row.id).where('object_removed_at', 'is', null).executeTakeFirst();
      removed += Number(r.numUpdatedRows);
    }
    if (due.length < REMOVE_BATCH) break;
  }
  return { expired: Number(marked.numUpdatedRows), removed };
}

/** The scheduler's periodic task: sweeps at most every RETENTION_SWEEP_MS, and at its first tick. */
export function retentionTask(deps: () => RetentionDeps, everyMs = RETENTION_SWEEP_MS, log?: { info(obj: object, msg: string): void }) {
  let last = -Infinity;
  return {
    name: 'export-retention',
    async run(signal: AbortSignal): Promise<void> {
      if (Date.now() - last < everyMs) return;
      last = Date.now();
      const t0 = Date.now();
      const r = await sweepExpiredExports({ ...deps(), signal });
      // Said when it did something (files deleted are gone for good), not on every quiet sweep.
      if (r.expired > 0 || r.removed > 0) log?.info({ job: 'export_retention', ...r, ms: Date.now() - t0 }, 'expired exports removed');
    },
  };
}
