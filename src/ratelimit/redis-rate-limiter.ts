import { Redis } from 'ioredis';
import { combine, type BucketSpec, type MultiDecision, type RateDecision, type RateLimiter } from './rate-limiter.js';

// The same token buckets as MemoryRateLimiter, kept in Redis so every process of a deployment draws
// from one bucket per key (and per account). Redis's own clock is used so app servers with skewed
// clocks agree.
//
// The requests of one event-loop turn go to Redis together, as one call of one Lua script: a
// command each cost Redis about 12 µs of CPU a request (a read, a dispatch and a script call each)
// and this process a socket write each. The script takes the requests in order, each from all of
// its buckets or from none, exactly as if they had come one by one, and writes each bucket back
// once. ARGV: the number of requests, then per request its number of buckets, then each bucket's
// capacity (per minute) in KEYS order.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = tonumber(ARGV[1])
local tokens = {}
local out = {}
local k = 0
for r = 1, n do
  local m = tonumber(ARGV[1 + r])
  local allowed = 1
  for i = k + 1, k + m do
    local key = KEYS[i]
    local cap = tonumber(ARGV[1 + n + i])
    local tk = tokens[key]
    if tk == nil then
      local b = redis.call('HMGET', key, 'tokens', 'at')
      tk = tonumber(b[1]) or cap
      local at = tonumber(b[2]) or now
      tk = math.min(cap, tk + math.max(0, now - at) * cap / 60000)
    end
    tokens[key] = tk
    if tk < 1 then allowed = 0 end
  end
  out[#out + 1] = allowed
  for i = k + 1, k + m do
    local key = KEYS[i]
    if allowed == 1 then tokens[key] = tokens[key] - 1 end
    out[#out + 1] = tostring(tokens[key])
  end
  k = k + m
end
for key, tk in pairs(tokens) do
  redis.call('HSET', key, 'tokens', tostring(tk), 'at', now)
  redis.call('PEXPIRE', key, 61000)
end
return out
`;

type TakeFn = (numberOfKeys: number, ...args: Array<string | number>) => Promise<Array<number | string>>;

interface Waiting {
  specs: BucketSpec[];
  resolve: (d: MultiDecision) => void;
  reject: (err: unknown) => void;
}

/** Requests per script call: bounds one call's work inside Redis (it blocks Redis meanwhile). */
const MAX_BATCH = 256;

export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  private readonly takeScript: TakeFn;
  private queue: Waiting[] = [];
  private scheduled = false;

  constructor(url: string, private readonly prefix = 'sdg:rl:') {
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    this.redis.defineCommand('sdgTakeBatch', { lua: TAKE });
    const r = this.redis as unknown as { sdgTakeBatch: TakeFn };
    this.takeScript = (n, ...args) => r.sdgTakeBatch(n, ...args);
  }

  async take(key: string, perMinute: number): Promise<RateDecision> {
    return this.takeAll([{ key, perMinute }]);
  }

  takeAll(specs: BucketSpec[]): Promise<MultiDecision> {
    return new Promise((resolve, reject) => {
      this.queue.push({ specs, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the turn's I/O callbacks: every request parsed in this turn joins the call.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const all = this.queue;
    this.queue = [];
    this.scheduled = false;
    for (let i = 0; i < all.length; i += MAX_BATCH) void this.send(all.slice(i, i + MAX_BATCH));
  }

  private async send(batch: Waiting[]): Promise<void> {
    const keys: string[] = [];
    const counts: number[] = [];
    const caps: number[] = [];
    for (const w of batch) {
      counts.push(w.specs.length);
      for (const s of w.specs) {
        keys.push(this.prefix + s.key);
        caps.push(s.perMinute);
      }
    }
    let out: Array<number | string>;
    try {
      out = await this.takeScript(keys.length, ...keys, batch.length, ...counts, ...caps);
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    let at = 0;
    for (const w of batch) {
      const allowed = out[at] === 1;
      const n = w.specs.length;
      const tokens = new Array<number>(n);
      for (let i = 0; i < n; i++) tokens[i] = Number(out[at + 1 + i]);
      at += n + 1;
      w.resolve(combine(w.specs, tokens, allowed));
    }
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
