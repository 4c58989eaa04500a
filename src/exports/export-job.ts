// The export job: queued → running → completed | failed. A crash mid-write leaves the export
// `running` with a lease nobody renews; when it expires another worker claims it and writes the
// file again from the start (the put is atomic: nothing partial is ever visible at the key). A
// failed attempt is retried the same way, after a wait; the third failure fails the export.
import { releaseLease, runLeasedNow, withHeartbeat, type Claim } from '../jobs/lease.js';
import { claimNextExport } from './export-claim.js';
import { JobGaveUpError, type JobKind, type JobSummary } from '../jobs/runner.js';
import { completeExport, exportLease, failExport, findExport, markExportStarted, retryExportAt } from './export-repo.js';
import { writeExport } from './export-writer.js';
import { type JobDeps, isStopping, leaseMs } from '../jobs/job-deps.js';

/** Exports read only the store: no data source needed. */
export type ExportDeps = Omit<JobDeps, 'source' | 'crawlPages'>;

export const EXPORT_MAX_ATTEMPTS = 3;

export async function performExport(deps: ExportDeps, claim: Claim, parent: AbortSignal): Promise<JobSummary | void> {
  const db = deps.store.db;
  const now = () => deps.bulk.clock().toISOString();
  const row = await findExport(db, claim.id);
  if (!row) return;
  if (claim.attempts > EXPORT_MAX_ATTEMPTS) {
    await failExport(db, claim, `The export could not be written after ${EXPORT_MAX_ATTEMPTS} attempts.`, now());
    return { accountId: row.account_id, status: 'failed' };
  }
  await markExportStarted(db, claim, now());
  const objects = deps.bulk.objects;
  try {
    // Leftovers of an attempt that crashed mid-write.
    await objects.cleanupPartial?.(row.object_key);
    const file = await withHeartbeat(db, exportLease, claim, leaseMs(deps), parent, (signal) =>
      writeExport(db, objects, { id: row.id, start: row.start_date, end: row.end_date, objectKey: row.object_key }, {
        pageSize: deps.config.exports.pageSize,
        pageDelayMs: deps.config.exports.pageDelayMs,
        signal,
      }),
    );
    await completeExport(db, claim, { ...file, now: now() });
    return { accountId: row.account_id, status: 'completed', tweetCount: file.tweetCount, sizeBytes: file.sizeBytes };
  } catch (err) {
    if (isStopping(parent)) {
      await releaseLease(db, exportLease, claim);
      return { accountId: row.account_id, status: 'released' };
    }
    if (claim.attempts >= EXPORT_MAX_ATTEMPTS) {
      await failExport(db, claim, 'The export could not be written; request it again.', now());
      await objects.cleanupPartial?.(row.object_key);
      throw new JobGaveUpError(claim.attempts, err);
    } else {
      // What fails an export is mostly brief (the object store's network, a disk being cleared): the
      // next attempt waits a lease's time (JOBS_LEASE_SECONDS), twice that after the second failure.
      await retryExportAt(db, claim, Date.now() + leaseMs(deps) * claim.attempts);
    }
    throw err;
  }
}

/** Exports are claimed in turns across accounts (export-claim.ts), not oldest first. */
export function exportJobKind(deps: ExportDeps): JobKind {
  return {
    name: 'export',
    concurrency: 1,
    async claim(owner: string) {
      const c = await claimNextExport(deps.store.db, owner, leaseMs(deps));
      return c && { id: c.id, attempt: c.attempts, perform: (signal: AbortSignal) => performExport(deps, c, signal) };
    },
  };
}

/** Tests and tools: runs one now in this process, if it is claimable. */
export async function runExportNow(deps: ExportDeps, id: string, owner = 'inline'): Promise<boolean> {
  return runLeasedNow(deps.store.db, exportLease, id, owner, leaseMs(deps), (c, signal) => performExport(deps, c, signal));
}
