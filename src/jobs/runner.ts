// The worker loop: polls each job kind for claimable rows, runs up to `concurrency` of each at once,
// and stops cleanly (no timer left behind; running jobs are told to stop and awaited).
import { setMaxListeners } from 'node:events';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { LeaseLostError } from './lease.js';
import { isStoreUnavailable } from '../errors/store-unavailable.js';
import type { StorageOutage } from '../db/storage-outage.js';
import type { JobOutcome, JobStats } from './job-stats.js';

export interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  debug?(obj: object, msg: string): void;
}

/** What a job reports when it ends (its status and counts), for the log line. */
export type JobSummary = Record<string, string | number | boolean | null | undefined>;

export interface ClaimedJob {
  id: string;
  /** 1 for the first attempt. */
  attempt?: number;
  /** Does the work. Should return soon after `signal` aborts (stop, or the lease was lost). */
  perform(signal: AbortSignal): Promise<JobSummary | void>;
}

export interface JobKind {
  name: string;
  concurrency: number;
  /** Level of the start and end lines: 'debug' for kinds with very many small jobs (crawl targets). */
  logLevel?: 'info' | 'debug';
  claim(owner: string): Promise<ClaimedJob | undefined>;
}

export interface PeriodicTask {
  name: string;
  run(signal: AbortSignal): Promise<void>;
}

/**
 * Thrown by a job that failed for the last time and marked its row failed: the runner then logs
 * that it will not be retried (with the failure as `cause`), not that it will.
 */
export class JobGaveUpError extends Error {
  constructor(
    readonly attempts: number,
    cause: unknown,
  ) {
    super(`gave up after ${attempts} attempts`, { cause });
    this.name = 'JobGaveUpError';
  }
}

/** Identifies this process in lease_owner columns. */
export function newWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

export class JobRunner {
  private timer: NodeJS.Timeout | undefined;
  // Every job under way listens to its signal (lease.ts): no listener limit, as there is no leak.
  private readonly ac = withoutListenerLimit(new AbortController());
  private readonly running = new Map<string, Set<Promise<void>>>();
  private ticking: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly kinds: JobKind[],
    private readonly tasks: PeriodicTask[],
    /**
     * `outage`: the store's outage report, which takes failures that mean the store cannot be reached.
     * `stats`: where each job's outcome and time are counted (the process's /metrics).
     */
    private readonly opts: {
      pollMs: number;
      owner: string;
      log: Log;
      outage?: StorageOutage | undefined;
      stats?: JobStats | undefined;
      /** An error while nothing may be run: the embedded store's file is gone (db/store-file-watch.ts). */
      gate?: (() => Error | undefined) | undefined;
    },
  ) {
    for (const k of kinds) {
      this.running.set(k.name, new Set());
      opts.stats?.declareKind(k.name);
    }
    for (const t of tasks) opts.stats?.declareTask(t.name);
  }

  /** A failure: reported with the store's outage if the store cannot be reached (once for all of them), else by `otherwise`. */
  private failed(err: unknown, otherwise: () => void): void {
    if (this.opts.outage && isStoreUnavailable(err)) this.opts.outage.failed(err, this.opts.log);
    else otherwise();
  }

  start(): void {
    this.schedule(0);
  }

  /** Looks for work now instead of at the next poll (new work was just queued in this process). */
  wake(): void {
    if (this.stopped) return;
    if (this.ticking) this.again = true;
    else this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.ac.abort(new Error('worker stopping'));
    await this.ticking;
    const all = [...this.running.values()].flatMap((s) => [...s]);
    await Promise.allSettled(all);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined;
        const soon = this.again;
        this.again = false;
        this.schedule(soon ? 0 : this.opts.pollMs);
      });
    }, ms);
  }

  private async tick(): Promise<void> {
    const closed = this.opts.gate?.();
    if (closed) return this.failed(closed, () => undefined);
    for (const task of this.tasks) {
      if (this.stopped) return;
      try {
        await task.run(this.ac.signal);
      } catch (err) {
        this.opts.stats?.taskFailed(task.name);
        this.failed(err, () => this.opts.log.error({ err, task: task.name }, 'periodic task failed'));
      }
    }
    for (const kind of this.kinds) {
      const set = this.running.get(kind.name)!;
      while (!this.stopped && set.size < kind.concurrency) {
        let job: ClaimedJob | undefined;
        try {
          job = await kind.claim(this.opts.owner);
        } catch (err) {
          this.failed(err, () => this.opts.log.warn({ err, kind: kind.name }, 'could not claim a job; will retry'));
          break;
        }
        if (!job) break;
        const log = this.opts.log;
        const line = kind.logLevel === 'debug' ? (o: object, m: string) => log.debug?.(o, m) : (o: object, m: string) => log.info(o, m);
        const started = Date.now();
        const stats = this.opts.stats;
        stats?.started(kind.name);
        const ended = (outcome: JobOutcome) => stats?.ended(kind.name, outcome, (Date.now() - started) / 1000);
        line({ job: kind.name, id: job.id, attempt: job.attempt }, `${kind.name} started`);
        const p: Promise<void> = job
          .perform(this.ac.signal)
          .then((summary) => {
            ended('finished');
            line({ job: kind.name, id: job!.id, ...summary, ms: Date.now() - started }, `${kind.name} finished`);
          })
          .catch((err: unknown) => {
            if (err instanceof LeaseLostError) {
              ended('taken_over');
              log.warn({ err, job: kind.name, id: job!.id }, 'job taken over by another worker');
            } else if (err instanceof JobGaveUpError) {
              ended('gave_up');
              log.error({ err: err.cause, job: kind.name, id: job!.id, attempts: err.attempts, ms: Date.now() - started }, `${kind.name} failed for good after ${err.attempts} attempts`);
            } else {
              ended('retrying');
              this.failed(err, () => log.error({ err, job: kind.name, id: job!.id, ms: Date.now() - started }, `${kind.name} failed; it will be retried`));
            }
          })
          .finally(() => {
            set.delete(p);
            this.wake(); // a slot is free: the next job need not wait for the poll
          });
        set.add(p);
      }
    }
  }
}

function withoutListenerLimit(ac: AbortController): AbortController {
  setMaxListeners(0, ac.signal);
  return ac;
}
