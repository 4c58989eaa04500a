import { Redis } from 'ioredis';
import { combine, type BucketSpec, type MultiDecision, type RateDecision, type RateLimiter } from './rate-limiter.js';

// The same token buckets as MemoryRateLimiter, kept in Redis so every process of a deployment draws
// from one bucket per key (and per account). One Lua script refills every bucket it is given, takes a
// token from each only if each has one, and writes them back: both limits of a request cost one
// round trip and cannot interleave with another request's. Redis's own clock is used so app servers
// with skewed clocks agree.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tokens = {}
local allowed = 1
for i = 1, #KEYS do
  local cap = tonumber(ARGV[i])
  local b = redis.call('HMGET', KEYS[i], 'tokens', 'at')
  local tk = tonumber(b[1]) or cap
  local at = tonumber(b[2]) or now
  tk = math.min(cap, tk + math.max(0, now - at) * cap / 60000)
  if tk < 1 then allowed = 0 end
  tokens[i] = tk
end
local out = { allowed }
for i = 1, #KEYS do
  if allowed == 1 then tokens[i] = tokens[i] - 1 end
  redis.call('HSET', KEYS[i], 'tokens', tostring(tokens[i]), 'at', now)
  redis.call('PEXPIRE', KEYS[i], 61000)
  out[i + 1] = tostring(tokens[i])
end
return out
`;

type TakeFn = (numberOfKeys: number, ...args: Array<string | number>) => Promise<[number, ...string[]]>;

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  private readonly takeScript: TakeFn;

  constructor(url: string, private readonly prefix = 'sdg:rl:') {
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    // numberOfKeys is given per call: a request may draw from one bucket (an address) or two (key and account).
    this.redis.defineCommand('sdgTakeAll', { lua: TAKE });
    const r = this.redis as unknown as { sdgTakeAll: TakeFn };
    this.takeScript = (n, ...args) => r.sdgTakeAll(n, ...args);
  }

  async take(key: string, perMinute: number): Promise<RateDecision> {
    return this.takeAll([{ key, perMinute }]);
  }

  async takeAll(specs: BucketSpec[]): Promise<MultiDecision> {
    const [allowed, ...raw] = await this.takeScript(specs.length, ...specs.map((s) => this.prefix + s.key), ...specs.map((s) => s.perMinute));
    return combine(specs, raw.map(Number), allowed === 1);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
