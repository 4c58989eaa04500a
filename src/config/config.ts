// Configuration: read from the environment once at start-up, validated, then passed around as a plain object.
import { resolve } from 'node:path';
import { parseCosts } from './costs.js';
import { ConfigError, type Env, num, oneOf, optStr, str, url } from './env.js';
import { loadPlans, type Plan } from './plans.js';
import { parseS3Config, type S3Config } from './object-storage.js';
import { parseWalletConfig, type WalletConfig } from '../connectors/wallet/chains.js';
import { DEFAULT_POOL_SIZE } from '../db/pool-size.js';

export type Role = 'api' | 'worker' | 'scheduler';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /**
   * SQLITE_PAGE_SIZE: the page size a new embedded store is made with (bytes; undefined: the store's
   * default, see db/connect.ts). An existing store keeps its own.
   */
  sqlitePageSize: number | undefined;
  databaseUrl: string | undefined;
  /** DATABASE_POOL_SIZE: the Postgres connections a process's pool may open (its group charges open up to 2 more). */
  databasePoolSize: number;
  redisUrl: string | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Signs cursors and download links. When unset, a random one is created once and kept in the store. */
  secret: string | undefined;
  /** SECRET's value before a rotation: still accepted on cursors and download links, never used to sign. */
  secretPrevious: string | undefined;
  publicBaseUrl: string | undefined;
  roles: Role[];
  /** WORKERS: processes `sdg serve` runs the API in (node:cluster, one port); 1 is the plain single process. */
  workers: number;
  plans: Plan[];
  defaultPlanId: string;
  costs: Record<string, number>;
  /** Web pages of these origins may call the API from a browser (CORS_ORIGINS); '*' any; undefined none (the default). */
  corsOrigins: string[] | '*' | undefined;
  /** Fastify's trustProxy: false, a hop count, or the proxies' addresses/CIDRs. */
  trustProxy: false | number | string[];
  /** Hosts (host[:port]) a request may name for links built from its Host header. */
  allowedHosts: string[];
  /** Requests without a valid API key allowed per client address and minute; beyond it 429 before any key lookup. */
  authFailuresPerMinute: number;
  /** Bearer token for /metrics; unset: /metrics answers loopback callers only. */
  metricsToken: string | undefined;
  /**
   * METRICS_PORT: where a process without the api role (a worker, a scheduler) serves /healthz,
   * /readyz and /metrics; unset, it serves nothing. An API process serves them on PORT.
   */
  metricsPort: number | undefined;
  source: {
    kind: 'demo' | 'x' | 'bluesky';
    demo: { seed: number; userCount: number; latencyMs: number; faultRate: number; rateLimitPerMinute: number };
    x: { bearerToken: string | undefined; baseUrl: string; dialect: 'posts' | 'tweets' };
    bluesky: { appViewUrl: string };
    timeoutMs: number;
  };
  cache: {
    profileSeconds: number;
    tweetSeconds: number;
    listSeconds: number;
    communitySeconds: number;
    /** Postgres: memory for the process-local cache of fresh stored tweets (MB of JSON). */
    tweetMemoryMb: number;
  };
  /** Metering on Postgres (see credits/postgres-meter-store.ts). */
  credits: {
    /** A process's lease on a slice of a balance lasts this long unrenewed (a dead process's, then swept). */
    leaseSeconds: number;
    /** How often every API process sweeps expired leases. */
    sweepSeconds: number;
    /** How long a key lookup is reused: the bound on how late a revocation is seen by another process. */
    keyCacheMs: number;
    /** How long a call the balance covers waits for credits held by the account's calls in progress before its 402. */
    holdWaitMs: number;
  };
  crawl: { intervalHours: number; backfillDays: number; concurrency: number; refreshDays: number };
  exports: {
    linkTtlSeconds: number;
    dir: string;
    /** Tweets read from the store per keyset page while writing an export. */
    pageSize: number;
    /** Pause between pages (ms); 0 in production, set by crash tests to make an export slow. */
    pageDelayMs: number;
    /** Export files older than this (from completion) are removed and their records marked expired; 0 keeps them. */
    retentionDays: number;
    /** An S3-compatible bucket instead of `dir` (S3_BUCKET set). */
    s3: S3Config | undefined;
  };
  /** Background jobs (watchlist batches, exports, crawl): how often idle workers poll, how long a claim lasts unrenewed. */
  jobs: { pollMs: number; leaseSeconds: number };
  /** Unfinished jobs one account may have at once; beyond them 409 open_jobs_limit_reached. */
  quotas: { openBatchesPerAccount: number; openExportsPerAccount: number };
  /** How long finished rows are kept before the retention job deletes them. */
  retention: { batchDays: number; crawlDays: number; intervalMinutes: number };
  idempotencyTtlHours: number;
  /** Node's and Fastify's socket limits: a slow or idle client cannot hold a connection for ever. */
  server: {
    requestTimeoutMs: number;
    headersTimeoutMs: number;
    keepAliveTimeoutMs: number;
    connectionTimeoutMs: number;
    maxRequestsPerSocket: number;
    maxConnections: number;
    /** Open connections from one client address (an IPv6 /64); 0: no limit. */
    maxConnectionsPerAddress: number;
  };
  wallet: WalletConfig;
  env: Env;
}

const roleNames: readonly Role[] = ['api', 'worker', 'scheduler'];

export function loadConfig(env: Env = process.env): Config {
  const dataDir = resolve(str(env, 'DATA_DIR', './data'));
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres', 'postgresql']);
  const redisUrl = url(env, 'REDIS_URL', ['redis', 'rediss']);
  const secret = optStr(env, 'SECRET');
  if (secret !== undefined && secret.length < 32) {
    throw new ConfigError('SECRET must be at least 32 characters long.');
  }
  const secretPrevious = optStr(env, 'SECRET_PREVIOUS');
  if (secretPrevious !== undefined && secret === undefined) {
    throw new ConfigError('SECRET_PREVIOUS is the secret SECRET replaced: set SECRET to the new one too.');
  }
  if (secretPrevious !== undefined && secretPrevious.length < 32) {
    throw new ConfigError('SECRET_PREVIOUS must be at least 32 characters long, as SECRET was.');
  }
  const roles = str(env, 'ROLES', 'api,worker,scheduler')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  for (const r of roles) {
    if (!(roleNames as readonly string[]).includes(r)) throw new ConfigError(`ROLES may list api, worker, scheduler; got ${r}.`);
  }
  // `ROLES=,` made a process that ran nothing and exited 0, silently.
  if (roles.length === 0) throw new ConfigError('ROLES lists no role: give one or more of api, worker, scheduler (unset, a process runs all three).');
  const workers = workerCount(env, roles as Role[], databaseUrl, redisUrl);
  const plans = loadPlans(optStr(env, 'PLANS_FILE'));
  const defaultPlanId = str(env, 'DEFAULT_PLAN', plans[0]!.id);
  if (!plans.some((p) => p.id === defaultPlanId)) {
    throw new ConfigError(`DEFAULT_PLAN ${defaultPlanId} is not one of the plans: ${plans.map((p) => p.id).join(', ')}.`);
  }
  const sourceKind = oneOf(env, 'SOURCE', ['demo', 'x', 'bluesky'] as const, 'demo');
  const xBearer = optStr(env, 'X_BEARER_TOKEN');
  if (sourceKind === 'x' && !xBearer) throw new ConfigError('SOURCE=x needs X_BEARER_TOKEN.');

  return {
    host: str(env, 'HOST', '127.0.0.1'),
    port: num(env, 'PORT', 8080, { min: 0, max: 65535, integer: true }),
    dataDir,
    sqlitePageSize: sqlitePageSize(env),
    databaseUrl,
    databasePoolSize: num(env, 'DATABASE_POOL_SIZE', DEFAULT_POOL_SIZE, { integer: true, min: 1, max: 1_000 }),
    redisUrl,
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    secret,
    secretPrevious,
    publicBaseUrl: url(env, 'PUBLIC_BASE_URL', ['http', 'https']),
    roles: roles as Role[],
    workers,
    plans,
    defaultPlanId,
    costs: parseCosts(optStr(env, 'COSTS')),
    trustProxy: trustProxy(env),
    corsOrigins: corsOrigins(env),
    allowedHosts: allowedHosts(env),
    metricsToken: metricsToken(env),
    metricsPort: optStr(env, 'METRICS_PORT') === undefined ? undefined : num(env, 'METRICS_PORT', 0, { min: 0, max: 65535, integer: true }),
    authFailuresPerMinute: num(env, 'AUTH_FAILURES_PER_MINUTE', 60, { integer: true, min: 1, max: 1_000_000 }),
    source: {
      kind: sourceKind,
      demo: {
        seed: num(env, 'DEMO_SEED', 1, { integer: true, min: 0, max: 2 ** 31 - 1 }),
        userCount: num(env, 'DEMO_USER_COUNT', 200_000, { integer: true, min: 1_000, max: 1_000_000 }),
        latencyMs: num(env, 'DEMO_LATENCY_MS', 0, { min: 0, max: 60_000 }),
        faultRate: num(env, 'DEMO_FAULT_RATE', 0, { min: 0, max: 1 }),
        rateLimitPerMinute: num(env, 'DEMO_RATE_LIMIT_PER_MINUTE', 0, { integer: true, min: 0 }),
      },
      x: {
        bearerToken: xBearer,
        baseUrl: url(env, 'X_BASE_URL', ['http', 'https']) ?? 'https://api.x.com',
        dialect: oneOf(env, 'X_API_DIALECT', ['posts', 'tweets'] as const, 'posts'),
      },
      bluesky: { appViewUrl: url(env, 'BLUESKY_APPVIEW_URL', ['http', 'https']) ?? 'https://public.api.bsky.app' },
      timeoutMs: num(env, 'SOURCE_TIMEOUT_MS', 10_000, { integer: true, min: 100, max: 120_000 }),
    },
    cache: {
      profileSeconds: num(env, 'CACHE_PROFILE_SECONDS', 300, { integer: true, min: 0 }),
      tweetSeconds: num(env, 'CACHE_TWEET_SECONDS', 60, { integer: true, min: 0 }),
      listSeconds: num(env, 'CACHE_LIST_SECONDS', 60, { integer: true, min: 0 }),
      communitySeconds: num(env, 'CACHE_COMMUNITY_SECONDS', 3600, { integer: true, min: 0 }),
      tweetMemoryMb: num(env, 'TWEET_CACHE_MB', 64, { min: 0, max: 65_536 }),
    },
    credits: {
      leaseSeconds: num(env, 'CREDIT_LEASE_SECONDS', 30, { min: 1, max: 600 }),
      sweepSeconds: num(env, 'CREDIT_SWEEP_SECONDS', 15, { min: 0.05, max: 600 }),
      keyCacheMs: num(env, 'KEY_CACHE_MS', 500, { integer: true, min: 0, max: 1_000 }),
      holdWaitMs: num(env, 'CREDIT_HOLD_WAIT_MS', 5_000, { integer: true, min: 0, max: 60_000 }),
    },
    crawl: {
      intervalHours: num(env, 'CRAWL_INTERVAL_HOURS', 6, { min: 0.0001, max: 24 * 30 }),
      backfillDays: num(env, 'CRAWL_BACKFILL_DAYS', 7, { min: 0, max: 365 }),
      refreshDays: num(env, 'CRAWL_REFRESH_DAYS', 2, { min: 0, max: 365 }),
      concurrency: num(env, 'CRAWL_CONCURRENCY', 8, { integer: true, min: 1, max: 256 }),
    },
    exports: {
      linkTtlSeconds: num(env, 'EXPORT_LINK_TTL_SECONDS', 900, { integer: true, min: 1, max: 7 * 24 * 3600 }),
      dir: resolve(str(env, 'EXPORTS_DIR', resolve(dataDir, 'exports'))),
      pageSize: num(env, 'EXPORT_PAGE_SIZE', 2_000, { integer: true, min: 1, max: 50_000 }),
      pageDelayMs: num(env, 'EXPORT_PAGE_DELAY_MS', 0, { integer: true, min: 0, max: 60_000 }),
      retentionDays: num(env, 'EXPORT_RETENTION_DAYS', 7, { min: 0, max: 36_500 }),
      s3: parseS3Config(env),
    },
    jobs: {
      pollMs: num(env, 'JOBS_POLL_MS', 250, { integer: true, min: 10, max: 60_000 }),
      leaseSeconds: num(env, 'JOBS_LEASE_SECONDS', 30, { min: 0.5, max: 3_600 }),
    },
    quotas: {
      openBatchesPerAccount: num(env, 'MAX_OPEN_BATCHES_PER_ACCOUNT', 10, { integer: true, min: 1, max: 100_000 }),
      openExportsPerAccount: num(env, 'MAX_OPEN_EXPORTS_PER_ACCOUNT', 5, { integer: true, min: 1, max: 100_000 }),
    },
    retention: {
      batchDays: num(env, 'BATCH_RETENTION_DAYS', 30, { min: 0.0001, max: 3_650 }),
      crawlDays: num(env, 'CRAWL_RETENTION_DAYS', 14, { min: 0.0001, max: 3_650 }),
      intervalMinutes: num(env, 'RETENTION_INTERVAL_MINUTES', 60, { min: 0.01, max: 10_080 }),
    },
    idempotencyTtlHours: 24,
    server: serverLimits(env, trustProxy(env) !== false),
    wallet: wrapConfigError(() => parseWalletConfig(env)),
    env,
  };
}

const PAGE_SIZES = ['4096', '8192', '16384', '32768', '65536'] as const;

function sqlitePageSize(env: Env): number | undefined {
  const v = optStr(env, 'SQLITE_PAGE_SIZE');
  return v === undefined ? undefined : Number(oneOf(env, 'SQLITE_PAGE_SIZE', PAGE_SIZES, '8192'));
}

function workerCount(env: Env, roles: Role[], databaseUrl: string | undefined, redisUrl: string | undefined): number {
  const n = num(env, 'WORKERS', 1, { integer: true, min: 1, max: 256 });
  if (n === 1) return n;
  // The embedded store's credit meter and the in-memory rate limiter are per process: N processes on
  // them would each meter and limit on their own, so a balance or a rate could be overrun.
  const missing = [databaseUrl ? undefined : 'DATABASE_URL', redisUrl ? undefined : 'REDIS_URL'].filter(Boolean);
  if (missing.length > 0) {
    throw new ConfigError(
      `WORKERS=${n} needs DATABASE_URL and REDIS_URL (${missing.join(' and ')} not set): the embedded store's credit meter and the in-memory rate limiter are per process, so ${n} processes on them would not meter or limit exactly. Set both, or WORKERS=1.`,
    );
  }
  if (!roles.includes('api')) throw new ConfigError(`WORKERS=${n} sets how many processes serve the API, but ROLES (${roles.join(',')}) does not include api.`);
  return n;
}

function corsOrigins(env: Env): Config['corsOrigins'] {
  const raw = optStr(env, 'CORS_ORIGINS')?.trim();
  if (!raw) return undefined;
  if (raw === '*') return '*';
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const o of list) {
    let origin: string | undefined;
    try {
      const u = new URL(o);
      origin = u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
    } catch {
      origin = undefined;
    }
    // As a browser sends it: scheme, host and port, nothing after.
    if (origin !== o) throw new ConfigError(`CORS_ORIGINS lists origins (https://app.example.com, no path or trailing slash) separated by commas, or is *; got ${o}.`);
  }
  return list;
}

function trustProxy(env: Env): Config['trustProxy'] {
  const raw = (optStr(env, 'TRUST_PROXY') ?? 'false').trim();
  if (raw === 'false' || raw === '0') return false;
  // One reverse proxy in front: believe its X-Forwarded-* only, not whatever the client put before it.
  if (raw === 'true') return 1;
  if (/^[0-9]+$/.test(raw)) return Number(raw);
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const a of list) {
    if (!/^[0-9a-fA-F.:]+(\/[0-9]{1,3})?$/.test(a)) {
      throw new ConfigError(`TRUST_PROXY must be false, a hop count, or a comma-separated list of proxy addresses/CIDRs; got ${a}.`);
    }
  }
  return list;
}

function allowedHosts(env: Env): string[] {
  const port = optStr(env, 'PORT') ?? '8080';
  const host = optStr(env, 'HOST') ?? '127.0.0.1';
  const raw = optStr(env, 'ALLOWED_HOSTS');
  const list = raw
    ? raw.split(',').map((s) => s.trim()).filter(Boolean)
    : [...new Set([`${host}:${port}`, `localhost:${port}`, `127.0.0.1:${port}`])].filter((h) => !h.startsWith('0.0.0.0:') && !h.startsWith('[::]:') && !h.startsWith(':::'));
  for (const h of list) {
    if (!/^[a-zA-Z0-9.\-[\]:]+$/.test(h)) throw new ConfigError(`ALLOWED_HOSTS lists host[:port] names separated by commas; got ${h}.`);
  }
  return list;
}

function metricsToken(env: Env): string | undefined {
  const token = optStr(env, 'METRICS_TOKEN');
  if (token !== undefined && token.length < 16) throw new ConfigError('METRICS_TOKEN must be at least 16 characters long.');
  return token;
}

function serverLimits(env: Env, behindProxy: boolean): Config['server'] {
  const requestTimeoutMs = num(env, 'SERVER_REQUEST_TIMEOUT_MS', 30_000, { integer: true, min: 1_000, max: 3_600_000 });
  const headersTimeoutMs = num(env, 'SERVER_HEADERS_TIMEOUT_MS', 10_000, { integer: true, min: 1_000, max: 600_000 });
  // Node requires the headers to arrive within the whole request's time.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError('SERVER_HEADERS_TIMEOUT_MS must not be larger than SERVER_REQUEST_TIMEOUT_MS.');
  }
  const maxConnections = num(env, 'SERVER_MAX_CONNECTIONS', 1_024, { integer: true, min: 1, max: 1_000_000 });
  return {
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: num(env, 'SERVER_KEEP_ALIVE_TIMEOUT_MS', 5_000, { integer: true, min: 100, max: 600_000 }),
    connectionTimeoutMs: num(env, 'SERVER_CONNECTION_TIMEOUT_MS', 120_000, { integer: true, min: 1_000, max: 3_600_000 }),
    maxRequestsPerSocket: num(env, 'SERVER_MAX_REQUESTS_PER_SOCKET', 1_000, { integer: true, min: 0, max: 1_000_000 }),
    maxConnections,
    // Behind a proxy every connection comes from it (which limits its clients itself): no limit by
    // default there. Else a quarter of all, so one address cannot hold them all.
    maxConnectionsPerAddress: num(env, 'SERVER_MAX_CONNECTIONS_PER_ADDRESS', behindProxy ? 0 : Math.max(1, Math.floor(maxConnections / 4)), { integer: true, min: 0, max: 1_000_000 }),
  };
}

function wrapConfigError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError((err as Error).message);
  }
}
