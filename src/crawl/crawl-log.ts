// The scheduler's crawl task, with a log line when a cycle starts (how many accounts it targets) and
// when it ends (its totals). A cycle may be completed by the scheduler or by the worker that finished
// its last account, in any process: the task remembers the cycles it saw running and reports each
// once it finds it completed.
import type { JobDeps } from '../jobs/job-deps.js';
import type { Log, PeriodicTask } from '../jobs/runner.js';
import { crawlTick } from './crawl-scheduler.js';
import { runningCycle } from './crawl-repo.js';

export function crawlSchedulerTask(deps: JobDeps, log: Log): PeriodicTask {
  const watching = new Set<string>();
  const db = deps.store.db;
  return {
    name: 'crawl-scheduler',
    async run() {
      const t = await crawlTick(deps);
      const running = await runningCycle(db);
      if (running && t.started === running.id) {
        log.info({ job: 'crawl_cycle', id: running.id, trigger: running.trigger, accountsTargeted: running.accounts_targeted }, 'crawl cycle started');
      } else if (running) {
        // Started by `sdg crawl start` or another scheduler, or before this process restarted: said
        // once here, so that its end below has a start in this log (also when this poll first sees
        // it by extending it).
        if (!watching.has(running.id)) {
          log.info({ job: 'crawl_cycle', id: running.id, trigger: running.trigger, accountsTargeted: running.accounts_targeted, startedAt: running.started_at }, 'crawl cycle running, started elsewhere');
        }
        if (t.extended === running.id) log.info({ job: 'crawl_cycle', id: running.id, accountsTargeted: running.accounts_targeted }, 'crawl cycle extended with newly watched accounts');
      }
      if (running) watching.add(running.id);
      for (const id of watching) {
        if (id === running?.id) continue;
        const c = await db.selectFrom('crawl_cycles').selectAll().where('id', '=', id).executeTakeFirst();
        watching.delete(id);
        if (c?.status !== 'completed') continue;
        log.info(
          {
            job: 'crawl_cycle',
            id,
            trigger: c.trigger,
            accountsTargeted: c.accounts_targeted,
            accountsCompleted: c.accounts_completed,
            accountsFailed: c.accounts_failed,
            tweetsIngested: c.tweets_ingested,
            tweetsUpdated: c.tweets_updated,
            ms: Date.parse(c.completed_at ?? c.started_at) - Date.parse(c.started_at),
          },
          'crawl cycle finished',
        );
      }
    },
  };
}
