// The one place where the program is put together from configuration.
import { buildBulkServices } from './background.js';
import type { Config } from '../config/config.js';
import type { Deps } from '../http/types.js';
import { KeyResolver } from '../http/auth-hook.js';
import { CursorCodec } from '../pagination/cursor.js';
import { createMetrics } from '../http/metrics.js';
import { MemoryRateLimiter } from '../ratelimit/rate-limiter.js';
import { openStore, type Store } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { resolveSecret } from './secret.js';
import { LazyWalletService } from '../connectors/wallet/lazy-wallet-service.js';
import { buildSource } from '../sources/build-source.js';
import { meterStoreFor } from '../credits/meter-store.js';
import { SocialService } from '../social/social-service.js';
import { TweetLookup } from '../social/tweet-lookup.js';
import { tweetStoreFor } from '../social/tweet-store.js';

export interface BuildOptions {
  /** Use this store instead of opening one from configuration (tests). */
  store?: Store;
  /** Skip migrations (the caller ran them). */
  migrate?: boolean;
}

export async function buildDeps(config: Config, opts: BuildOptions = {}): Promise<Deps> {
  const store = opts.store ?? openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  if (opts.migrate !== false) await migrateToLatest(store);
  const secret = await resolveSecret(store, config.secret);
  const w = config.wallet;
  const source = await buildSource(config, store);
  const tweetStore = tweetStoreFor(store);
  const meter = meterStoreFor(store);
  return {
    config,
    store,
    meter,
    keys: new KeyResolver(meter),
    cursors: new CursorCodec(secret),
    // One process: buckets in memory. Several: REDIS_URL shares them.
    // Optional integrations (ioredis, viem, and in buildSource @atproto/api) are imported only when
    // used, so the embedded default's heap holds none of them.
    rateLimiter: config.redisUrl ? new (await import('../ratelimit/redis-rate-limiter.js')).RedisRateLimiter(config.redisUrl) : new MemoryRateLimiter(),
    metrics: createMetrics(),
    startedAt: new Date(),
    secret,
    source,
    tweetStore,
    social: new SocialService(store.db, source, tweetStore, config.cache, Date.now, new TweetLookup(store)),
    bulk: buildBulkServices(config),
    wallet: new LazyWalletService(async () => {
      const { ViemWalletService } = await import('../connectors/wallet/wallet-service.js');
      return new ViemWalletService(w.chains, { defaultChain: w.defaultChain, timeoutMs: w.rpcTimeoutMs, retryCount: w.rpcRetries });
    }),
  };
}

export async function closeDeps(deps: Deps): Promise<void> {
  await deps.rateLimiter.close?.();
  await deps.store.close();
}
