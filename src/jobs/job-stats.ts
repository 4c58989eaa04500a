// What this process's job runners did, as plain numbers, turned into Prometheus series when /metrics
// is read (watchJobs in src/http/metrics.ts). The worker's log says the same job by job; these are
// for alerts and graphs: jobs failing, jobs given up on, how long they take.
import { Histogram } from '../domain/histogram.js';

/** How a job's run ended in this process. */
export type JobOutcome =
  /** perform() returned: the job's record says completed (or, for an export or batch, failed on its own terms). */
  | 'finished'
  /** It failed and its row goes back to the queue (an outage of the store included). */
  | 'retrying'
  /** It failed at its last attempt: its record says failed. */
  | 'gave_up'
  /** Another worker took its lease over (this one stalled past JOBS_LEASE_SECONDS). */
  | 'taken_over';

export const JOB_OUTCOMES: readonly JobOutcome[] = ['finished', 'retrying', 'gave_up', 'taken_over'];

/** Job run times in seconds: a crawl target takes tens of milliseconds, a large export minutes. */
export const JOB_SECONDS_BUCKETS: readonly number[] = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

export class JobStats {
  /** By job kind: runs that ended, by outcome. */
  readonly outcomes = new Map<string, Record<JobOutcome, number>>();
  /** By job kind: how long each run took, whatever its outcome. */
  readonly seconds = new Map<string, Histogram>();
  /** By job kind: runs in progress in this process. */
  readonly running = new Map<string, number>();
  /** By periodic task (the crawl scheduler, retention): runs that threw. */
  readonly taskFailures = new Map<string, number>();

  /** Makes the kind's series appear (at zero) before its first job, so a rate() has a start. */
  declareKind(kind: string): void {
    if (!this.outcomes.has(kind)) this.outcomes.set(kind, { finished: 0, retrying: 0, gave_up: 0, taken_over: 0 });
    if (!this.seconds.has(kind)) this.seconds.set(kind, new Histogram(JOB_SECONDS_BUCKETS));
    if (!this.running.has(kind)) this.running.set(kind, 0);
  }

  declareTask(task: string): void {
    if (!this.taskFailures.has(task)) this.taskFailures.set(task, 0);
  }

  started(kind: string): void {
    this.declareKind(kind);
    this.running.set(kind, this.running.get(kind)! + 1);
  }

  ended(kind: string, outcome: JobOutcome, seconds: number): void {
    this.declareKind(kind);
    this.running.set(kind, Math.max(0, this.running.get(kind)! - 1));
    this.outcomes.get(kind)![outcome] += 1;
    this.seconds.get(kind)!.observe(seconds);
  }

  taskFailed(task: string): void {
    this.taskFailures.set(task, (this.taskFailures.get(task) ?? 0) + 1);
  }
}
