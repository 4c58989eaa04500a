// WORKERS=N: one `sdg serve` as N API processes on one port, with node:cluster. The primary runs the
// migrations once, forks the workers and supervises them; it serves no HTTP itself (with Node's
// default round-robin scheduling on Linux it accepts each connection and hands it to a worker).
// Config refuses WORKERS > 1 without DATABASE_URL and REDIS_URL: the credit meter and the rate limits
// must be shared by the processes to stay exact.
import cluster, { type Worker } from 'node:cluster';
import type { DestinationStream } from 'pino';
import type { Config, Role } from '../config/config.js';
import { openStore } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { appLogger } from '../http/logging.js';

/** Tells a forked worker which slot (1..N) it fills; a replacement takes the dead worker's slot. */
const SLOT_ENV = 'SDG_CLUSTER_SLOT';
/** A worker that lived this long before dying is restarted at once (after the first back-off step). */
const STABLE_MS = 10_000;
const FIRST_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 10_000;
/** After SIGTERM, how long the primary waits for the workers (each has its own 15 s limit in serve.ts). */
export const STOP_TIMEOUT_MS = 20_000;

/** True in a process forked by runPrimary. */
export function isClusterWorker(config: Config): boolean {
  return config.workers > 1 && cluster.isWorker && process.env[SLOT_ENV] !== undefined;
}

/**
 * The roles a forked worker runs: every one runs the API; the background roles of ROLES (worker,
 * scheduler) run in slot 1 only, so once, not N times. Not in the primary: it hands every connection
 * to the workers, and job work (export files, crawl pages) on its event loop would delay all of them.
 * A slot 1 that dies is replaced in slot 1, so the background roles are neither lost nor doubled
 * (doubled would still be safe: jobs are rows claimed under leases, scheduler steps are conditional).
 */
export function clusterWorkerRoles(config: Config): Role[] {
  const slot = Number(process.env[SLOT_ENV]);
  return slot === 1 ? config.roles : config.roles.filter((r) => r === 'api');
}

/**
 * The cluster primary: migrates, forks config.workers workers and returns once they are forked.
 * A worker that dies is re-forked after a back-off (250 ms doubling to 10 s while it keeps dying
 * within 10 s of its start); one that dies before the first start of all of them has completed
 * stops the start (its own error is on stderr). SIGTERM/SIGINT: every worker gets SIGTERM and
 * finishes its requests in flight (serve.ts); the primary exits 0 once all have exited cleanly.
 */
export async function runPrimary(config: Config, opts: { logStream?: DestinationStream } = {}): Promise<void> {
  const log = appLogger(config.logLevel, opts.logStream);
  // Once, before any worker opens the store: a failing migration stops the start with its message
  // instead of N workers each failing (concurrent runs would be safe too: Kysely locks on Postgres).
  const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqlitePageSize: config.sqlitePageSize, poolSize: 1 });
  try {
    await migrateToLatest(store);
  } finally {
    await store.close();
  }

  const n = config.workers;
  const bySlot = new Map<number, Worker>();
  const quickDeaths = new Map<number, number>();
  const restarts = new Set<NodeJS.Timeout>();
  const started = new Set<number>();
  let startedAll = false;
  let stopping = false;
  let exitCode = 0;

  const exitWhenAllGone = () => {
    if (stopping && bySlot.size === 0 && restarts.size === 0) {
      log.info({ exitCode }, 'all workers stopped');
      process.exit(exitCode);
    }
  };

  const stop = (signal: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    for (const t of restarts) clearTimeout(t);
    restarts.clear();
    log.info({ signal, workers: bySlot.size }, 'shutting down: workers finish their in-flight requests');
    for (const w of bySlot.values()) w.process.kill('SIGTERM');
    const timer = setTimeout(() => {
      log.error({ left: bySlot.size }, 'workers did not stop in time: killing them');
      for (const w of bySlot.values()) w.process.kill('SIGKILL');
      process.exit(1);
    }, STOP_TIMEOUT_MS);
    timer.unref();
    exitWhenAllGone();
  };

  const fork = (slot: number) => {
    const w = cluster.fork({ [SLOT_ENV]: String(slot) });
    const bornAt = Date.now();
    bySlot.set(slot, w);
    w.once('listening', () => {
      if (startedAll) return;
      started.add(slot);
      if (started.size === n) {
        startedAll = true;
        log.info({ workers: n, host: config.host, port: config.port }, `${n} workers serving`);
      }
    });
    w.once('exit', (code, signal) => {
      if (bySlot.get(slot) === w) bySlot.delete(slot);
      if (stopping) {
        // Killed by our own SIGTERM before serve.ts installed its handler counts as stopped.
        if (code !== 0 && signal !== 'SIGTERM' && exitCode === 0) exitCode = 1;
        exitWhenAllGone();
        return;
      }
      if (!startedAll) {
        log.error({ slot, workerPid: w.process.pid, code, signal }, 'a worker failed to start: stopping');
        stop('startup failure', typeof code === 'number' && code !== 0 ? code : 1);
        return;
      }
      const deaths = Date.now() - bornAt >= STABLE_MS ? 0 : (quickDeaths.get(slot) ?? 0) + 1;
      quickDeaths.set(slot, deaths);
      const delay = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, deaths - 1));
      log.warn({ slot, workerPid: w.process.pid, code, signal, restartInMs: delay }, 'worker died: starting a replacement');
      const t = setTimeout(() => {
        restarts.delete(t);
        if (!stopping) fork(slot);
      }, delay);
      restarts.add(t);
    });
  };

  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  for (let slot = 1; slot <= n; slot++) fork(slot);
}
