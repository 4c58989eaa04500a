import type SQLite from 'better-sqlite3';

// Group commit for SQLite: the writes that concurrent requests ask for within one event-loop turn
// run in a single transaction, so N requests pay for one commit instead of N. Each job still runs
// its own statements in order (a conditional UPDATE stays one atomic check-and-write), and no
// promise resolves before the transaction that holds its writes has committed.
export class GroupCommit {
  private queue: Array<{ job: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void }> = [];
  private scheduled = false;
  private readonly runAll: (jobs: Array<() => unknown>) => Array<{ ok: true; value: unknown } | { ok: false; error: unknown }>;

  constructor(private readonly db: SQLite.Database) {
    // Each job in a savepoint of its own: one that throws part-way leaves nothing behind.
    const savepoint = db.transaction((job: () => unknown) => job());
    const tx = db.transaction((jobs: Array<() => unknown>) =>
      jobs.map((job) => {
        try {
          return { ok: true as const, value: savepoint(job) };
        } catch (error) {
          // Its savepoint is rolled back; the other jobs' writes stand.
          return { ok: false as const, error };
        }
      }),
    );
    this.runAll = (jobs) => tx.immediate(jobs);
  }

  run<T>(job: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ job, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    // Kysely's transactions on this same connection span event-loop turns. Writing now would fold
    // our writes into that transaction (better-sqlite3 nests as a savepoint) and a rollback of it
    // would undo a charge already reported: wait until it has ended.
    if (this.db.inTransaction) {
      setImmediate(() => this.flush());
      return;
    }
    const batch = this.queue;
    this.queue = [];
    this.scheduled = false;
    let results;
    try {
      results = this.runAll(batch.map((b) => b.job));
    } catch (error) {
      for (const b of batch) b.reject(error);
      return;
    }
    results.forEach((r, i) => (r.ok ? batch[i]!.resolve(r.value) : batch[i]!.reject(r.error)));
  }
}
