import type SQLite from 'better-sqlite3';

// Group commit for SQLite: the writes that concurrent requests ask for within one event-loop turn
// run in a single transaction, so N requests pay for one commit instead of N (a crawl's pages queued
// in the same turn go in a second one, after it: see BULK_COMMIT_MS). Each job still runs
// its own statements in order (a conditional UPDATE stays one atomic check-and-write), and no
// promise resolves before the transaction that holds its writes has committed.
//
// A job that throws part-way must leave nothing behind, so each job runs in a savepoint of its own.
// Savepoints are not free: every page a job changes is first copied to the statement journal (for
// a page of tweets, hundreds of index pages). Jobs that declare themselves rerunnable (their only
// effect is their statements, so running one again after a rollback changes nothing else) skip
// them: they run first, bare; if one throws, the whole transaction is rolled back (none of the
// other jobs has run yet) and the turn runs again with every job in its savepoint.

export interface GroupOptions {
  /** The job has no effect but its statements on this connection: it may run twice after a rollback. */
  rerunnable?: boolean;
  /**
   * A background bulk write (a crawl's page of tweets): what a hold of the bulk writes keeps waiting
   * while the other jobs (the calls' charges) go on. See hold().
   */
  bulk?: boolean;
}

/** What a hold keeps waiting: every job, or only the bulk ones. */
export type HoldScope = 'all' | 'bulk';

interface Queued {
  job: () => unknown;
  rerunnable: boolean;
  bulk: boolean;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * While calls write (their jobs were committed within CALLS_RECENT_MS), the bulk jobs (a crawl's
 * pages) a commit takes are as many as fit this long by their recent cost (at least one); the rest
 * wait for the next turn of the event loop, so that the requests arriving meanwhile are served, and
 * their charges committed, between a crawl's commits rather than after all of them. A crawl with
 * no calls beside it keeps its large commits: smaller ones cost it a quarter of its speed.
 */
export const BULK_COMMIT_MS = 8;
const CALLS_RECENT_MS = 1_000;

export interface GroupCommitOptions {
  /** The bulk jobs' time a commit aims at (BULK_COMMIT_MS). */
  bulkCommitMs?: number;
}

export class GroupCommit {
  private queue: Queued[] = [];
  /** How many of the queued jobs are bulk ones. */
  private bulkQueued = 0;
  private scheduled = false;
  /** Holds in force, by scope. */
  private readonly holds = { all: 0, bulk: 0 };
  private readonly runFast: (batch: Queued[]) => Outcome[];
  private readonly runSafe: (batch: Queued[]) => Outcome[];
  /** What a bulk job cost its commit lately, in ms (0 until one has run). */
  private bulkJobMs = 0;
  /** When the calls' jobs were last committed (performance.now()). */
  private callsAt = -Infinity;
  private readonly bulkCommitMs: number;

  constructor(
    private readonly db: SQLite.Database,
    opts: GroupCommitOptions = {},
  ) {
    this.bulkCommitMs = opts.bulkCommitMs ?? BULK_COMMIT_MS;
    const savepoint = db.transaction((job: () => unknown) => job());
    const inSavepoint = (q: Queued): Outcome => {
      try {
        return { ok: true, value: savepoint(q.job) };
      } catch (error) {
        // Some failures (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM) end the whole transaction, not
        // only the statement: SQLite rolls it back itself. The earlier jobs' writes are gone, and a
        // job run now would run outside any transaction and keep its writes whatever the turn's
        // fate: the turn fails, every job with it (test/core/group-commit-full.test.ts).
        if (!db.inTransaction) throw error;
        // Its savepoint is rolled back; the other jobs' writes stand.
        return { ok: false, error };
      }
    };
    const safe = db.transaction((batch: Queued[]) => batch.map(inSavepoint));
    // Rerunnable jobs bare (a throw rolls back the transaction), then the others in savepoints.
    class RerunnableFailed extends Error {}
    const fast = db.transaction((batch: Queued[]) => {
      const out = new Array<Outcome>(batch.length);
      batch.forEach((q, i) => {
        if (!q.rerunnable) return;
        try {
          out[i] = { ok: true, value: q.job() };
        } catch (error) {
          throw new RerunnableFailed('a rerunnable job threw', { cause: error });
        }
      });
      batch.forEach((q, i) => {
        if (!q.rerunnable) out[i] = inSavepoint(q);
      });
      return out;
    });
    this.runSafe = (batch) => safe.immediate(batch);
    this.runFast = (batch) => {
      if (!batch.some((q) => q.rerunnable)) return this.runSafe(batch);
      try {
        return fast.immediate(batch);
      } catch (err) {
        // Only a rerunnable job's throw is retried: nothing of the turn was kept and no other job
        // has run. A failed BEGIN or COMMIT fails the turn's jobs, as it always did.
        if (err instanceof RerunnableFailed) return this.runSafe(batch);
        throw err;
      }
    };
  }

  run<T>(job: () => T, opts: GroupOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ job, rerunnable: opts.rerunnable === true, bulk: opts.bulk === true, resolve: resolve as (v: unknown) => void, reject });
      if (opts.bulk === true) this.bulkQueued++;
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Holds the jobs (`all`) or only the bulk ones (`bulk`): they queue and wait, the event loop and
   * the other jobs do not, until the returned function is called (once; later calls do nothing).
   * The busy writer holds them while its worker copies the WAL's last frames, so that the next write
   * can start the WAL over (busy-writer.ts): the bulk writes for the long copy, all of them only for
   * the short one that follows.
   */
  hold(scope: HoldScope = 'all'): () => void {
    this.holds[scope]++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds[scope]--;
      if (this.queue.length > 0 && !this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    };
  }

  private flush(): void {
    // Held: the jobs stay queued; the release schedules the flush.
    if (this.holds.all > 0) {
      this.scheduled = false;
      return;
    }
    // Kysely's transactions on this same connection span event-loop turns. Writing now would fold
    // our writes into that transaction (better-sqlite3 nests as a savepoint) and a rollback of it
    // would undo a charge already reported: wait until it has ended.
    if (this.db.inTransaction) {
      setImmediate(() => this.flush());
      return;
    }
    this.scheduled = false;
    const queued = this.queue;
    // The calls' jobs commit first, on their own: a charge does not wait for a crawl's pages.
    const calls = this.bulkQueued === 0 ? queued : queued.filter((q) => !q.bulk);
    const bulk = this.bulkQueued === 0 ? [] : queued.filter((q) => q.bulk);
    const now = performance.now();
    if (calls.length > 0) this.callsAt = now;
    // The bulk jobs not taken stay queued, in their order: held ones until the release schedules
    // the next flush, paced ones until the next turn.
    const take = bulk.length === 0 || this.holds.bulk > 0 ? 0 : this.bulkToTake(bulk.length, now);
    this.queue = take >= bulk.length ? [] : bulk.slice(take);
    this.bulkQueued = this.queue.length;
    if (this.queue.length > 0 && this.holds.bulk === 0) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    if (calls.length > 0) this.commit(calls);
    if (take > 0) {
      const batch = take >= bulk.length ? bulk : bulk.slice(0, take);
      const started = performance.now();
      this.commit(batch);
      const perJob = (performance.now() - started) / batch.length;
      this.bulkJobMs = this.bulkJobMs > 0 ? (this.bulkJobMs + perJob) / 2 : perJob;
    }
  }

  /** How many of `queued` bulk jobs the next commit takes: all, unless calls write (see BULK_COMMIT_MS). */
  private bulkToTake(queued: number, now: number): number {
    if (this.bulkJobMs === 0 || now - this.callsAt >= CALLS_RECENT_MS) return queued;
    return Math.max(1, Math.floor(this.bulkCommitMs / this.bulkJobMs));
  }

  private commit(batch: Queued[]): void {
    let results;
    try {
      results = this.runFast(batch);
    } catch (error) {
      for (const b of batch) b.reject(error);
      return;
    }
    results.forEach((r, i) => (r.ok ? batch[i]!.resolve(r.value) : batch[i]!.reject(r.error)));
  }
}
