// The crawl's scheduler, run every poll by the scheduler role (any number of processes may run it:
// the store's unique indexes make every step happen once).
//   1. A running cycle whose targets are all done is completed.
//   2. Watchlisted accounts never crawled get their first crawl now: added to the running cycle, or
//      a cycle of their own (trigger 'new_accounts') when none runs and no scheduled one is due.
//   3. Scheduled cycles start on the boundaries of intervalHours counted from the Unix epoch (with
//      6 h: 00:00, 06:00, 12:00, 18:00 UTC): one is due at the first boundary after the latest cycle's
//      start; it visits every watchlisted account. A cycle still running at a boundary delays the next
//      one until it completes (cycles never overlap).
import { addTargets, anyWatchlisted, latestCycle, runningCycle, startCycle, tryFinalizeCycle, untargetedAccounts, watchlistMayHaveChanged, type CycleRow } from './crawl-repo.js';
import { newCycleId } from '../domain/record-ids.js';
import type { JobDeps } from '../jobs/job-deps.js';

export const intervalMs = (deps: Pick<JobDeps, 'config'>): number => Math.max(1, Math.round(deps.config.crawl.intervalHours * 3_600_000));

/** When the next scheduled cycle is due (it may be in the past: then it starts as soon as it can). */
export function dueAt(latest: CycleRow | undefined, nowMs: number, interval: number): number {
  if (!latest) return Math.floor(nowMs / interval) * interval;
  return (Math.floor(Date.parse(latest.started_at) / interval) + 1) * interval;
}

// Looking for never-crawled accounts reads the whole watchlist (an anti-join with crawl_accounts):
// every poll, that made the scheduler's cost grow with the watchlist, and a cycle's with its square.
// A process looks again only when the watchlist may have changed since its last look (see
// watchlistMayHaveChanged), and at least every FULL_LOOK_MS whatever that says: entries written
// outside a batch, or a batch finished by a host whose clock lags this one's, wait at most that
// long. Kept per store (one per process outside tests).
const FULL_LOOK_MS = 60_000;
const lastLook = new WeakMap<object, { since: string; at: number }>();

async function freshAccounts(deps: JobDeps): Promise<string[]> {
  const db = deps.store.db;
  const before = lastLook.get(deps.store);
  const at = performance.now();
  if (before && at - before.at < FULL_LOOK_MS && !(await watchlistMayHaveChanged(db, before.since))) return [];
  // Taken before the read: a batch that finishes while it runs counts as finished after the look.
  const since = deps.bulk.clock().toISOString();
  const fresh = await untargetedAccounts(db, 5_000);
  // Nothing found is what lets the next polls skip; found accounts are targeted now, and the next
  // poll looks again for the rest (more than 5,000).
  if (fresh.length === 0) lastLook.set(deps.store, { since, at });
  else lastLook.delete(deps.store);
  return fresh;
}

export interface TickResult {
  finalized?: string;
  started?: string;
  extended?: string;
}

export async function crawlTick(deps: JobDeps): Promise<TickResult> {
  const db = deps.store.db;
  const now = deps.bulk.clock();
  const nowIso = now.toISOString();
  const out: TickResult = {};
  let running = await runningCycle(db);
  if (running && (await tryFinalizeCycle(db, running.id, nowIso))) {
    out.finalized = running.id;
    running = undefined;
  }
  const fresh = await freshAccounts(deps);
  if (running) {
    if (fresh.length > 0 && (await addTargets(db, running.id, fresh, nowIso))) {
      out.extended = running.id;
      deps.bulk.wakeups.notify();
    }
    return out;
  }
  const interval = intervalMs(deps);
  let c: CycleRow | undefined;
  if (now.getTime() >= dueAt(await latestCycle(db), now.getTime(), interval)) {
    // A scheduled cycle visits every watchlisted account, new ones included.
    c = await startCycle(db, { id: newCycleId(), trigger: 'schedule', slot: Math.floor(now.getTime() / interval), now: nowIso, who: 'all' });
  } else if (fresh.length > 0) {
    c = await startCycle(db, { id: newCycleId(), trigger: 'new_accounts', slot: null, now: nowIso, who: fresh });
  }
  if (c) {
    out.started = c.id;
    deps.bulk.wakeups.notify();
  }
  return out;
}

/** The honest next start for crawl-status. */
export async function nextExpectedAt(deps: Pick<JobDeps, 'store' | 'config' | 'bulk'>, running: boolean): Promise<string> {
  const db = deps.store.db;
  const nowMs = deps.bulk.clock().getTime();
  const interval = intervalMs(deps);
  const due = dueAt(await latestCycle(db), nowMs, interval);
  if (due > nowMs) return new Date(due).toISOString();
  // Overdue: it starts as soon as the running cycle completes, or right now if there is anyone to crawl.
  if (running || (await anyWatchlisted(db))) return new Date(nowMs).toISOString();
  return new Date((Math.floor(nowMs / interval) + 1) * interval).toISOString();
}
