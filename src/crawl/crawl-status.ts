// The crawl-status view (docs/spec/connector-spec.md, section 2.4).
import { lastCompletedCycle, runningCycle } from './crawl-repo.js';
import { nextExpectedAt } from './crawl-scheduler.js';
import type { JobDeps } from '../jobs/job-deps.js';

export interface CurrentCycleView {
  id: string;
  status: 'running';
  startedAt: string;
  accountsTargeted: number;
  accountsCompleted: number;
  accountsFailed: number;
  tweetsIngested: number;
  percentComplete: number;
}

export interface CompletedCycleView {
  id: string;
  startedAt: string;
  completedAt: string;
  durationMinutes: number;
  accountsTargeted: number;
  accountsCompleted: number;
  accountsFailed: number;
  tweetsIngested: number;
  tweetsUpdated: number;
}

export interface CrawlStatusView {
  currentCycle: CurrentCycleView | null;
  lastCompletedCycle: CompletedCycleView | null;
  schedule: { intervalHours: number; nextExpectedAt: string };
}

export async function crawlStatus(deps: Pick<JobDeps, 'store' | 'config' | 'bulk'>): Promise<CrawlStatusView> {
  const db = deps.store.db;
  const running = await runningCycle(db);
  let currentCycle: CurrentCycleView | null = null;
  if (running) {
    // The row's running counters (crawl-repo.ts): one read, however many accounts the cycle has.
    const done = running.accounts_completed + running.accounts_failed;
    currentCycle = {
      id: running.id,
      status: 'running',
      startedAt: running.started_at,
      accountsTargeted: running.accounts_targeted,
      accountsCompleted: running.accounts_completed,
      accountsFailed: running.accounts_failed,
      tweetsIngested: running.tweets_ingested,
      percentComplete: running.accounts_targeted === 0 ? 0 : (done / running.accounts_targeted) * 100,
    };
  }
  const last = await lastCompletedCycle(db);
  const lastCompleted: CompletedCycleView | null =
    last && last.completed_at
      ? {
          id: last.id,
          startedAt: last.started_at,
          completedAt: last.completed_at,
          durationMinutes: Math.max(0, Math.round((Date.parse(last.completed_at) - Date.parse(last.started_at)) / 60_000)),
          accountsTargeted: last.accounts_targeted,
          accountsCompleted: last.accounts_completed,
          accountsFailed: last.accounts_failed,
          tweetsIngested: last.tweets_ingested,
          tweetsUpdated: last.tweets_updated,
        }
      : null;
  return {
    currentCycle,
    lastCompletedCycle: lastCompleted,
    schedule: { intervalHours: deps.config.crawl.intervalHours, nextExpectedAt: await nextExpectedAt(deps, running !== undefined) },
  };
}
