import { Redis } from 'ioredis';
import type { RateDecision, RateLimiter } from './rate-limiter.js';

// The same token bucket as MemoryRateLimiter, kept in Redis so every process of a deployment draws
// from one bucket per key. One Lua script reads, refills, takes and writes atomically; Redis's own
// clock is used so app servers with skewed clocks agree.
const TAKE = `
local cap = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = cap / 60000
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or cap
local at = tonumber(b[2]) or now
tokens = math.min(cap, tokens + math.max(0, now - at) * rate)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], 61000)
return { allowed, tostring(tokens) }
`;

type TakeFn = (key: string, perMinute: number) => Promise<[number, string]>;

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  private readonly takeScript: TakeFn;

  constructor(url: string, private readonly prefix = 'sdg:rl:') {
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    this.redis.defineCommand('sdgTake', { numberOfKeys: 1, lua: TAKE });
    const r = this.redis as unknown as { sdgTake: TakeFn };
    this.takeScript = (key, perMinute) => r.sdgTake(key, perMinute);
  }

  async take(key: string, perMinute: number): Promise<RateDecision> {
    const [allowed, raw] = await this.takeScript(this.prefix + key, perMinute);
    const tokens = Number(raw);
    const rate = perMinute / 60_000;
    return {
      allowed: allowed === 1,
      limit: perMinute,
      remaining: Math.floor(tokens),
      resetSeconds: Math.ceil((perMinute - tokens) / rate / 1000),
      retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / rate / 1000)),
    };
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
