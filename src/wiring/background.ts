// The bulk-export services (object store, clock, retry policy, in-process wake-ups) and the
// background roles: the worker (watchlist batches, exports, crawl targets) and the scheduler (crawl
// cycles, export retention). `sdg serve` runs whichever roles ROLES lists; `sdg worker` / `sdg scheduler` run one.
import pino from 'pino';
import type { Config, Role } from '../config/config.js';
import { JobRunner, newWorkerId, type Log } from '../jobs/runner.js';
import { LocalObjectStore } from '../objects/local-object-store.js';
import type { ObjectStore } from '../objects/object-store.js';
import { batchJobKind } from '../watchlist/batch-job.js';
import { crawlJobKind } from '../crawl/crawl-job.js';
import { crawlSchedulerTask } from '../crawl/crawl-log.js';
import { exportJobKind } from '../exports/export-job.js';
import { retentionTask as exportRetentionTask } from '../exports/export-retention.js';
import { defaultRetryPolicy } from '../sources/resilience.js';
import { Wakeups } from '../jobs/wakeups.js';
import { retentionTask } from '../jobs/retention.js';
import type { BulkServices, JobDeps } from '../jobs/job-deps.js';

/** `objects`: the store buildObjectStore chose (default: the local directory). */
export function buildBulkServices(config: Config, objects: ObjectStore = new LocalObjectStore(config.exports.dir)): BulkServices {
  return {
    objects,
    clock: () => new Date(),
    retry: defaultRetryPolicy,
    wakeups: new Wakeups(),
  };
}

export interface Background {
  stop(): Promise<void>;
}

/** Starts the worker and/or scheduler roles (default: those in config.roles) until stop(). */
export async function startBackground(deps: JobDeps, opts: { roles?: Role[]; log?: Log } = {}): Promise<Background> {
  const roles = opts.roles ?? deps.config.roles;
  const log: Log = opts.log ?? pino({ level: deps.config.logLevel });
  const owner = newWorkerId();
  const runners: JobRunner[] = [];
  const runnerOpts = { pollMs: deps.config.jobs.pollMs, owner, log, outage: deps.store.outage, stats: deps.jobStats, gate: deps.store.fileGone };
  if (roles.includes('worker')) {
    runners.push(new JobRunner([batchJobKind(deps), exportJobKind(deps), crawlJobKind(deps)], [], runnerOpts));
  }
  if (roles.includes('scheduler')) {
    const exportRetention = exportRetentionTask(() => ({ db: deps.store.db, objects: deps.bulk.objects, retentionDays: deps.config.exports.retentionDays, now: deps.bulk.clock() }), undefined, log);
    runners.push(new JobRunner([], [crawlSchedulerTask(deps, log), retentionTask(deps, log), exportRetention], runnerOpts));
  }
  const unsubscribe = deps.bulk.wakeups.subscribe(() => {
    for (const r of runners) r.wake();
  });
  for (const r of runners) r.start();
  const started = roles.filter((r) => r === 'worker' || r === 'scheduler');
  if (started.length > 0) log.info({ roles: started, owner, pollMs: deps.config.jobs.pollMs }, `${started.join(' and ')} started`);
  // Exports write to the object store and retention deletes from it: a bucket that cannot be used
  // is said at start, not first met by an export failing for good minutes later. Not awaited, and
  // not fatal: the rest of the service works, and the store may come up after the gateway.
  if (started.length > 0) {
    deps.bulk.objects.check?.().then(
      () => log.info({}, 'object store ready'),
      (err: Error) => log.warn({ err: err.cause ?? err }, `${err.message}; exports will fail until it is fixed`),
    );
  }
  return {
    async stop() {
      unsubscribe();
      await Promise.all(runners.map((r) => r.stop()));
      if (started.length > 0) log.info({ roles: started }, `${started.join(' and ')} stopped`);
    },
  };
}
