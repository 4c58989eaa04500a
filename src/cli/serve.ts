import { startBackground } from '../wiring/background.js';
import type { Config } from '../config/config.js';
import type { DestinationStream } from 'pino';
import { buildApp } from '../http/app.js';
import { startRefunder } from '../credits/refunder.js';
import { startLeaseSweeper } from '../credits/lease-sweeper.js';
import { buildDeps, closeDeps } from '../wiring/deps.js';
import { lockApiRole } from '../db/api-role-lock.js';
import { tuneV8 } from './v8-tuning.js';
import { isStoreUnavailable } from '../errors/store-unavailable.js';
import type { Deps } from '../wiring/deps.js';
import type { FastifyBaseLogger } from 'fastify';

/** After SIGTERM, how long requests in flight and jobs handing their rows back may take before the process exits anyway. */
export const DRAIN_LIMIT_MS = 15_000;

/**
 * Runs the roles of ROLES (api, worker, scheduler; all by default) in this process until SIGTERM/SIGINT.
 * With WORKERS > 1: in the cluster primary, forks the workers (cluster.ts); in a worker, runs the API
 * (and, in worker 1, the background roles) on the port they share.
 * `logStream`: where log lines go (default: JSON lines on stdout).
 */
export async function serve(config: Config, opts: { logStream?: DestinationStream } = {}): Promise<void> {
  tuneV8();
  // node:cluster is loaded only when it is used.
  const cluster = config.workers > 1 ? await import('./cluster.js') : undefined;
  const worker = cluster?.isClusterWorker(config) ?? false;
  if (cluster && !worker) return cluster.runPrimary(config, opts);
  if (cluster && worker) config = { ...config, roles: cluster.clusterWorkerRoles(config) };
  // One API process per embedded store (api-role-lock.ts); taken before anything else opens the store.
  const apiLock = config.roles.includes('api') && !config.databaseUrl ? lockApiRole(config.dataDir) : undefined;
  // A cluster worker's primary has run the migrations.
  const deps = await buildDeps(config, { migrate: !worker });
  // A process without the API serves only its health and metrics, and only on METRICS_PORT.
  const systemOnly = !config.roles.includes('api');
  const app = await buildApp(deps, { systemOnly, ...(opts.logStream ? { logger: { stream: opts.logStream } } : {}) });
  deps.rateLimiter.onHealthChange?.((reachable, err) => {
    if (reachable) app.log.info('Redis is reachable again: rate limits are shared between processes again');
    else if (err?.message.startsWith('REDIS_URL names a database')) app.log.error(`${err.message}; until then each process limits calls on its own`);
    else app.log.warn({ err }, 'Redis cannot be reached: each process limits calls on its own until it is back');
  });
  const pageSize = deps.store.sqlitePageSize;
  if (config.sqlitePageSize !== undefined && pageSize !== undefined && pageSize !== config.sqlitePageSize) {
    // Told, not refused: the store works as it is, and changing its pages rewrites the whole file.
    app.log.warn(
      { pageSize, configured: config.sqlitePageSize },
      `SQLITE_PAGE_SIZE=${config.sqlitePageSize} applies to a new store: this one keeps its ${pageSize}-byte pages (README, "Memory and disk of a busy SQLite store", says how to convert it)`,
    );
  }
  const { keepAliveTimeoutMs, connectionTimeoutMs } = config.server;
  if (keepAliveTimeoutMs > connectionTimeoutMs) {
    // Told, not refused: it worked before 2026-12-07, when Node's keep-alive timer replaced the connection timer.
    app.log.warn(
      { keepAliveTimeoutMs, connectionTimeoutMs },
      `SERVER_KEEP_ALIVE_TIMEOUT_MS=${keepAliveTimeoutMs} is longer than SERVER_CONNECTION_TIMEOUT_MS=${connectionTimeoutMs}, which closes idle kept-alive connections too: they are kept alive for ${connectionTimeoutMs} ms, and the Keep-Alive header says so`,
    );
  }
  deps.store.onConnectionLost?.((err) => app.log.warn({ err }, 'a Postgres connection was lost while idle; the next query opens another'));
  const stops: Array<() => Promise<void>> = [];
  if (config.roles.includes('api')) {
    await app.listen({ host: config.host, port: config.port });
    const sweeper = startLeaseSweeper(deps.meter, { everyMs: config.credits.sweepSeconds * 1000, onError: (err) => sweepFailed(deps, app.log, err) });
    stops.push(async () => sweeper.stop());
    const refunder = startRefunder(deps.meter.lostCharges, app.log);
    stops.push(() => refunder.stop());
  } else if (config.metricsPort !== undefined) {
    await app.listen({ host: config.host, port: config.metricsPort });
    app.log.info({ port: (app.server.address() as { port: number }).port }, 'serving /healthz, /readyz and /metrics (METRICS_PORT)');
  }
  if (config.roles.includes('worker') || config.roles.includes('scheduler')) {
    const background = await startBackground(deps, { log: app.log });
    stops.push(() => background.stop());
  }
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, systemOnly ? `shutting down: stopping the ${config.roles.join(' and ')}` : 'shutting down: finishing in-flight requests');
    const timer = setTimeout(() => process.exit(1), DRAIN_LIMIT_MS);
    timer.unref();
    await app.close();
    for (const stop of stops.reverse()) await stop();
    await closeDeps(deps);
    apiLock?.release();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** A sweep that fails because the store cannot be reached is part of that outage, logged once with it (storage-outage.ts); anything else is logged as it happens. */
function sweepFailed(deps: Pick<Deps, 'store'>, log: FastifyBaseLogger, err: unknown): void {
  if (deps.store.outage && isStoreUnavailable(err)) deps.store.outage.failed(err, log);
  else log.warn({ err }, 'credit lease sweep failed');
}
