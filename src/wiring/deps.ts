// The one place where the program is put together from configuration. Each consumer takes the
// slice of Deps it uses (routes a Pick, jobs JobDeps), so a test can hand it fakes.
import { KeyResolver } from '../accounts/key-resolver.js';
import type { Config } from '../config/config.js';
import type { WalletService } from '../connectors/wallet/wallet-service.js';
import { LazyWalletService } from '../connectors/wallet/lazy-wallet-service.js';
import type { MeterStore } from '../credits/meter-store.js';
import { meterStoreFor } from '../credits/meter-store-for.js';
import { openStore, type Store } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { createMetrics, watchBacklog, watchMeter, watchRateLimiter, type Metrics } from '../http/metrics.js';
import { readBacklog } from '../jobs/job-backlog.js';
import type { JobDeps } from '../jobs/job-deps.js';
import { CursorCodec } from '../pagination/cursor.js';
import { MemoryRateLimiter, type RateLimiter } from '../ratelimit/rate-limiter.js';
import { SocialService } from '../social/social-service.js';
import { TweetLookup } from '../social/tweet-lookup.js';
import { tweetStoreFor, type TweetStore } from '../social/tweet-store.js';
import { crawlPagesFor } from '../crawl/page-ingest.js';
import { buildSource } from '../sources/build-source.js';
import { buildBulkServices } from './background.js';
import { buildObjectStore } from '../objects/build-object-store.js';
import { ledgerIdsFor, resolveSecrets } from './secret.js';
import type { SigningSecrets } from '../domain/signing-secrets.js';
import type { OpaqueIds } from '../domain/opaque-ids.js';

/** Everything the program is made of, built once here and passed around as a plain object. */
export interface Deps extends JobDeps {
  meter: MeterStore;
  keys: KeyResolver;
  cursors: CursorCodec;
  rateLimiter: RateLimiter;
  metrics: Metrics;
  startedAt: Date;
  /** Sign cursors and download links (the current one), and check them (also the previous one). */
  secrets: SigningSecrets;
  /** The ledger entries' public ids (led_…). */
  ledgerIds: OpaqueIds;
  wallet: WalletService;
  social: SocialService;
  /** Where tweets fetched by API reads are written. */
  tweetStore: TweetStore;
}

export interface BuildOptions {
  /** Use this store instead of opening one from configuration (tests). */
  store?: Store;
  /** Skip migrations (the caller ran them). */
  migrate?: boolean;
  /** Parts to use instead of the ones configuration would build (tests: a fake source, clock, wallet…). */
  overrides?: Partial<Deps>;
}

export async function buildDeps(config: Config, opts: BuildOptions = {}): Promise<Deps> {
  const o = opts.overrides ?? {};
  const store = opts.store ?? o.store ?? openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqlitePageSize: config.sqlitePageSize, poolSize: config.databasePoolSize });
  if (opts.migrate !== false) await migrateToLatest(store);
  const secrets = o.secrets ?? (await resolveSecrets(store, config.secret, config.secretPrevious));
  const w = config.wallet;
  const source = o.source ?? (await buildSource(config, store));
  const tweetStore = o.tweetStore ?? tweetStoreFor(store);
  const crawlPages = o.crawlPages ?? crawlPagesFor(store);
  const meter = o.meter ?? meterStoreFor(store, { leaseSeconds: config.credits.leaseSeconds });
  const metrics = o.metrics ?? createMetrics();
  if (meter.stats) watchMeter(metrics.registry, meter.stats);
  watchBacklog(metrics.registry, () => readBacklog(store.db));
  // One process: buckets in memory. Several: REDIS_URL shares them. Only the API limits calls: a
  // worker or scheduler alone does not connect to Redis (its /readyz answered 503 `redis
  // unavailable` for a Redis it never uses, and it logged Redis's outages).
  // Optional integrations (ioredis, viem, and in buildSource @atproto/api) are imported only when
  // used, so the embedded default's heap holds none of them.
  const rateLimiter: RateLimiter =
    o.rateLimiter ??
    (config.redisUrl && config.roles.includes('api') ? new (await import('../ratelimit/redis-rate-limiter.js')).RedisRateLimiter(config.redisUrl) : new MemoryRateLimiter());
  if (rateLimiter.stats) watchRateLimiter(metrics.registry, rateLimiter.stats);
  return {
    config,
    store,
    meter,
    keys: o.keys ?? new KeyResolver(meter, { cacheMs: config.credits.keyCacheMs }),
    cursors: o.cursors ?? new CursorCodec(secrets),
    rateLimiter,
    metrics,
    startedAt: o.startedAt ?? new Date(),
    secrets,
    ledgerIds: o.ledgerIds ?? (await ledgerIdsFor(store, secrets.current)),
    source,
    tweetStore,
    crawlPages,
    jobStats: metrics.jobs,
    social: o.social ?? new SocialService(store.db, source, tweetStore, config.cache, Date.now, new TweetLookup(store, { freshSeconds: config.cache.tweetSeconds, maxBytes: config.cache.tweetMemoryMb * 2 ** 20 })),
    bulk: o.bulk ?? buildBulkServices(config, await buildObjectStore(config)),
    wallet:
      o.wallet ??
      new LazyWalletService(async () => {
        const { ViemWalletService } = await import('../connectors/wallet/wallet-service.js');
        return new ViemWalletService(w.chains, { defaultChain: w.defaultChain, timeoutMs: w.rpcTimeoutMs, retryCount: w.rpcRetries });
      }),
  };
}

export async function closeDeps(deps: Pick<Deps, 'rateLimiter' | 'store' | 'meter'> & Partial<Pick<Deps, 'bulk'>>): Promise<void> {
  await deps.meter.close?.();
  await deps.rateLimiter.close?.();
  deps.bulk?.objects.close?.();
  await deps.store.close();
}
