import { Redis } from 'ioredis';
import { combine, MemoryRateLimiter, type BucketSpecs, type MultiDecision, type RateDecision, type RateLimiter, type RateLimitStats } from './rate-limiter.js';

// The same token buckets as MemoryRateLimiter, kept in Redis so every process of a deployment draws
// from one bucket per account (or per address). Redis's own clock is used so app servers with skewed
// clocks agree.
//
// The requests of one event-loop turn go to Redis together, as one call of one Lua script: a
// command each cost Redis about 12 µs of CPU a request (a read, a dispatch and a script call each)
// and this process a socket write each. The script takes the requests in order, each from all of
// its buckets or from none, exactly as if they had come one by one.
//
// Inside the script, Redis's CPU goes to its commands and to the Lua loop, so the commands do not
// grow with the buckets: every bucket is a field ("tokens:at") of one hash per minute of Redis's
// clock, read from this minute's hash, and from the last one's only for the buckets this minute's
// lacks (a bucket untouched for longer has refilled), then written to this minute's, which expires
// after two: four commands a call, five when some bucket was last touched in the minute before.
// (Reading the last minute's hash only when needed, and formatting the time once a call rather
// than once a bucket: Redis's CPU a call of 30 requests over 50 accounts went from 128-155 µs to
// 108-120 in alternating loops of calls, 2026-11-27; over one account no difference resolved.) The
// tokens left come back as integer thousandths (Lua formats a float slowly). Measured against a key
// per bucket (an HMGET, an HSET and a PEXPIRE each) in alternating runs on Postgres + Redis,
// 2026-11-26: Redis's CPU a request 4.5-5.2 µs to 3.4-4.2 with one account, 10-12 to 8.4-9.5 with
// 50 accounts in turn, whose distinct buckets (about 100 a call) are most of what is left.
// Consecutive requests with the same buckets (one caller's burst) go as one run, taken in one step:
// of a run of c, the first min(c, the fewest whole tokens among its buckets) are allowed and the
// rest refused, as one by one, and the script answers the run's count allowed and each bucket's
// tokens before it, from which each request's tokens after its own take follow. A turn of 50 calls
// of one key was 50 requests of 5 arguments and 3 answers each; it is one run.
// The hashes' names are made from the clock in the script, so this needs Redis itself, not a
// cluster. ARGV: the hashes' prefix, the number of distinct buckets and their names, the number of
// runs, then per run the number of its requests, the tokens it must leave in each of its buckets
// (0 for requests; a lease's reserve, below), its number of buckets and, for each, the bucket's
// position among the names and its capacity (per minute). It answers, per run, the number allowed
// and each bucket's tokens before the run in thousandths.
//
// Leases: while a bucket is far from empty, a call also takes a small lease of its tokens for this
// process (a run of its own after the requests', granted only as far as it leaves a tenth of the
// bucket's capacity in Redis), and the process's next requests of that bucket spend the lease
// without asking Redis: decided at once, in the turn they arrive, with no round trip and no work in
// Redis. A lease is at most a hundredth of the capacity (and 1,000 tokens), so buckets under 100 a
// minute never lease, and it is dropped unspent after LEASE_MS. Exact where it matters: no process
// allows a request without a token taken from the shared bucket, so all of them together never allow
// more than the limit; a process refuses only when its own lease is empty too (a request that Redis
// refused while a lease granted meanwhile has tokens is allowed from it); and below a tenth of the
// capacity no lease is granted, so near the limit every request is decided in Redis as before. What
// a lease costs: another process may refuse while this one holds unspent tokens, at most one
// lease's worth for each process holding one, for at most LEASE_MS after its last grant. The RateLimit-Remaining of a request allowed from a lease
// counts the bucket's tokens in Redis when the lease was granted plus what is left of the lease.
/**
 * A field value longer than Redis's hash-max-listpack-value (64 bytes by default), written with every
 * HSET so that the minute's hash is a hash table from its first call. Below hash-max-listpack-entries
 * fields (128 by default, 512 on some hosts) Redis keeps a small hash as a listpack, where each field
 * is found by scanning the others: an HMGET or HSET of a call's n buckets then costs n times the
 * hash's size. Measured over 50 accounts (50 fields, listpack), Redis's own command statistics:
 * HMGET 19.6 µs a call and HSET 18.6 as a listpack, 6.6 and 5.3 as a hash table (2026-11-28).
 */
const LISTPACK_BREAKER = '#'.repeat(80);

const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local minute = math.floor(now / 60000)
local cur = ARGV[1] .. minute
local k = tonumber(ARGV[2])
local names = {}
for i = 1, k do names[i] = ARGV[2 + i] end
local fresh = redis.call('HMGET', cur, unpack(names))
local missing = {}
for i = 1, k do if not fresh[i] then missing[#missing + 1] = i end end
local older = {}
if #missing > 0 then
  local lost = {}
  for j = 1, #missing do lost[j] = names[missing[j]] end
  local got = redis.call('HMGET', ARGV[1] .. (minute - 1), unpack(lost))
  for j = 1, #missing do older[missing[j]] = got[j] end
end
local tokens = {}
local out = {}
local o = 0
local runs = tonumber(ARGV[3 + k])
local a = 4 + k
local tonum = tonumber
local floor = math.floor
for r = 1, runs do
  local count = tonum(ARGV[a])
  local reserve = tonum(ARGV[a + 1])
  local m = tonum(ARGV[a + 2])
  local allowed = count
  for j = a + 3, a + 2 + 2 * m, 2 do
    local i = tonum(ARGV[j])
    local tk = tokens[i]
    if tk == nil then
      local cap = tonum(ARGV[j + 1])
      tk = cap
      local v = fresh[i] or older[i]
      if v then
        local sep = string.find(v, ':', 1, true)
        tk = math.min(cap, tonum(string.sub(v, 1, sep - 1)) + math.max(0, now - tonum(string.sub(v, sep + 1))) * cap / 60000)
      end
      tokens[i] = tk
    end
    local avail = tk - reserve
    if avail < allowed + 1 then allowed = math.max(0, floor(avail)) end
  end
  o = o + 1
  out[o] = allowed
  for j = a + 3, a + 2 + 2 * m, 2 do
    local i = tonum(ARGV[j])
    local tk = tokens[i]
    o = o + 1
    out[o] = floor(tk * 1000)
    tokens[i] = tk - allowed
  end
  a = a + 3 + 2 * m
end
local kv = {}
local c = 0
local at = ':' .. now
for i, tk in pairs(tokens) do
  kv[c + 1] = names[i]
  kv[c + 2] = tk .. at
  c = c + 2
end
kv[c + 1] = '#'
kv[c + 2] = '${LISTPACK_BREAKER}'
redis.call('HSET', cur, unpack(kv))
redis.call('PEXPIRE', cur, 120000)
return out
`;

/** Same buckets in the same order, none twice (a bucket named twice takes two tokens a request, which a run's count does not model). */
function sameBuckets(a: BucketSpecs, b: BucketSpecs): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i]!.key !== b[i]!.key || a[i]!.perMinute !== b[i]!.perMinute) return false;
    for (let j = 0; j < i; j++) if (a[j]!.key === a[i]!.key) return false;
  }
  return true;
}

type TakeFn = (numberOfKeys: number, ...args: Array<string | number>) => Promise<Array<number | string>>;

interface Waiting {
  specs: BucketSpecs;
  resolve: (d: MultiDecision) => void;
}

/** Requests per script call: bounds one call's work inside Redis (it blocks Redis meanwhile). */
const MAX_BATCH = 256;

/** A lease is at most this share of the bucket's capacity... */
const LEASE_SHARE = 1 / 100;
/** ...and at most this many tokens. */
const LEASE_MAX = 1_000;
/** A lease is granted only as far as it leaves this share of the capacity in Redis. */
const LEASE_RESERVE_SHARE = 1 / 10;
/** How long an unspent lease lasts (see the opening comment). */
const LEASE_MS = 1_000;
/**
 * How long a call to Redis may take before it counts as failed (decided in the process instead).
 * Redis answers in well under a millisecond; without a bound, a Redis that stopped answering on a
 * live connection (a network partition, a paused server) held every keyed call, and /readyz, until
 * it came back.
 */
const COMMAND_TIMEOUT_MS = 250;

/** The tokens a lease of a bucket of `perMinute` takes: 0 (no lease) under 100 a minute. */
const leaseSize = (perMinute: number): number => Math.min(LEASE_MAX, Math.floor(perMinute * LEASE_SHARE));

interface Lease {
  /** Tokens of this process's to spend. */
  tokens: number;
  perMinute: number;
  /** When the lease is dropped (Date.now() time). */
  until: number;
  /** The bucket's tokens in Redis when the lease was granted, after it (for RateLimit-Remaining). */
  left: number;
}

export interface RedisRateLimiterOptions {
  /** Hash names' prefix (tests use their own). */
  prefix?: string;
  /** Leases (see above); true unless set false. */
  leases?: boolean;
  /** How long an unspent lease lasts, in ms. */
  leaseMs?: number;
  /** How long a call to Redis may take, in ms (COMMAND_TIMEOUT_MS). */
  commandTimeoutMs?: number;
}

/**
 * While Redis cannot be reached, each process limits with buckets of its own (MemoryRateLimiter):
 * calls go on, each process allowing up to the full rate, instead of every keyed call failing with
 * a 500 after waiting for reconnection attempts (as before: 0.16 to 1 s each, measured). The shared buckets
 * resume once Redis is back. Readiness (/readyz) still reports Redis as unavailable meanwhile.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  private readonly takeScript: TakeFn;
  private queue: Waiting[] = [];
  private scheduled = false;
  private readonly local = new MemoryRateLimiter();
  /** Redis failed (a connection error or a failed call) and no call has succeeded since. */
  private down = false;
  /** While down, when to try Redis again (at once after a reconnection, else a second after a failure). */
  private retryAt = 0;
  private health: (reachable: boolean, err?: Error) => void = () => undefined;
  /** What failed first when Redis was last lost (the connection's error, not a later call's). */
  private lastError: Error | undefined;
  /** This process's leases, by bucket. */
  private readonly leases = new Map<string, Lease>();
  readonly stats: RateLimitStats = { decided: { lease: 0, redis: 0, local: 0 }, calls: 0, leasedTokens: 0 };
  private readonly prefix: string;
  private readonly leasing: boolean;
  private readonly leaseMs: number;
  /** Set when REDIS_URL's database does not exist on the server: see lost(). */
  private wrongDb: Error | undefined;

  // Not 'sdg:rl:', where the release before kept a hash per bucket: in a rolling upgrade the two
  // releases keep separate buckets (for at most a minute) instead of misreading each other's.
  constructor(url: string, opts: RedisRateLimiterOptions = {}) {
    this.prefix = opts.prefix ?? 'sdg:rlm:';
    this.leasing = opts.leases ?? true;
    this.leaseMs = opts.leaseMs ?? LEASE_MS;
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true, commandTimeout: opts.commandTimeoutMs ?? COMMAND_TIMEOUT_MS });
    this.redis.defineCommand('sdgTakeBatch', { lua: TAKE });
    const r = this.redis as unknown as { sdgTakeBatch: TakeFn };
    this.takeScript = (n, ...args) => r.sdgTakeBatch(n, ...args);
    // Listened to, ioredis no longer prints every failed reconnection attempt to stderr.
    this.redis.on('error', (err: Error) => this.lost(err));
    this.redis.on('ready', () => {
      this.retryAt = 0;
    });
  }

  /** Who hears that Redis became unreachable (with the error) or reachable again: once per change. */
  onHealthChange(handler: (reachable: boolean, err?: Error) => void): void {
    this.health = handler;
    // Lost before anyone listened (Redis down, or REDIS_URL wrong, from the start): the first
    // connection fails while the process is still starting, and would never be reported.
    if (this.down) handler(false, this.lastError);
  }

  private lost(err: Error): void {
    this.retryAt = Date.now() + 1_000;
    // REDIS_URL's database index beyond the server's `databases`: ioredis reports the SELECT's error
    // and goes on in database 0, where the buckets would have been shared with whatever else uses it,
    // and the process said Redis was reachable again. Taken as Redis unusable until restarted.
    if (!this.wrongDb && /DB index is out of range|invalid DB index/i.test(err.message)) {
      this.wrongDb = new Error(`REDIS_URL names a database this Redis server does not have (${err.message}): fix the database number in REDIS_URL, or raise the server's \`databases\` setting`);
      err = this.wrongDb;
      this.down = false;
    }
    if (this.down) return;
    this.lastError = err;
    this.down = true;
    this.health(false, err);
  }

  async take(key: string, perMinute: number): Promise<RateDecision> {
    return this.takeAll([{ key, perMinute }]);
  }

  takeAll(specs: BucketSpecs): Promise<MultiDecision> | MultiDecision {
    if (this.wrongDb || (this.down && (this.redis.status !== 'ready' || Date.now() < this.retryAt))) {
      this.stats.decided.local++;
      return this.local.takeAll(specs);
    }
    const leased = this.leases.size > 0 ? this.fromLeases(specs) : undefined;
    if (leased) return leased;
    // Never rejected: a failed call is decided in the process instead (send).
    return new Promise((resolve) => {
      this.queue.push({ specs, resolve });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the turn's I/O callbacks: every request parsed in this turn joins the call.
        setImmediate(() => this.flush());
      }
    });
  }

  /** The request allowed from this process's leases, if each of its buckets has a live one with a token. */
  private fromLeases(specs: BucketSpecs): MultiDecision | undefined {
    const now = Date.now();
    // A bucket named twice takes two tokens of its lease: asking each lease for as many as there are
    // buckets keeps it from going below 0.
    const need = specs.length;
    for (const s of specs) {
      const l = this.leases.get(s.key);
      if (!l || l.tokens < need || l.until <= now || l.perMinute !== s.perMinute) return undefined;
    }
    const tokens = new Array<number>(need);
    for (let i = 0; i < need; i++) {
      const l = this.leases.get(specs[i]!.key)!;
      l.tokens -= 1;
      tokens[i] = l.left + l.tokens;
    }
    this.stats.decided.lease++;
    return combine(specs, tokens, true);
  }

  /** Adds a lease's grant (with the bucket's tokens in Redis before it), dropping expired leases now and then. */
  private leased(key: string, perMinute: number, granted: number, before: number, now: number): void {
    const left = before - granted;
    this.stats.leasedTokens += granted;
    const l = this.leases.get(key);
    if (l && l.until > now && l.perMinute === perMinute) {
      l.tokens += granted;
      l.left = left;
      if (granted > 0) l.until = now + this.leaseMs;
    } else if (granted > 0) {
      if (this.leases.size >= 10_000) for (const [k, x] of this.leases) if (x.until <= now) this.leases.delete(k);
      this.leases.set(key, { tokens: granted, perMinute, until: now + this.leaseMs, left });
    }
  }

  private flush(): void {
    const all = this.queue;
    this.queue = [];
    this.scheduled = false;
    for (let i = 0; i < all.length; i += MAX_BATCH) void this.send(all.slice(i, i + MAX_BATCH));
  }

  private async send(batch: Waiting[]): Promise<void> {
    // Each distinct bucket named once; the runs give theirs by position (1-based, as in Lua).
    const index = new Map<string, number>();
    const names: string[] = [];
    /** Each distinct bucket's capacity (as first asked), by position in names. */
    const caps: number[] = [];
    const runs: Waiting[][] = [];
    const takes: Array<string | number> = [0];
    let countAt = 0;
    let last: Waiting | undefined;
    for (const w of batch) {
      if (last && sameBuckets(last.specs, w.specs)) {
        runs[runs.length - 1]!.push(w);
        (takes[countAt] as number)++;
        continue;
      }
      last = w;
      runs.push([w]);
      countAt = takes.length;
      takes.push(1, 0, w.specs.length);
      for (const s of w.specs) {
        let i = index.get(s.key);
        if (i === undefined) {
          i = names.push(s.key);
          index.set(s.key, i);
          caps.push(s.perMinute);
        }
        takes.push(i, s.perMinute);
      }
    }
    // After the requests' runs, a lease run for each of their buckets that leases.
    const leaseRuns: number[] = [];
    if (this.leasing) {
      for (let i = 0; i < names.length; i++) {
        const size = leaseSize(caps[i]!);
        if (size < 1) continue;
        leaseRuns.push(i);
        takes.push(size, Math.ceil(caps[i]! * LEASE_RESERVE_SHARE), 1, i + 1, caps[i]!);
      }
    }
    takes[0] = runs.length + leaseRuns.length;
    let out: Array<number | string>;
    this.stats.calls++;
    try {
      out = await this.takeScript(0, this.prefix, names.length, ...names, ...takes);
    } catch (err) {
      // Decided in this process instead. (Had the call reached Redis before the connection dropped,
      // its tokens were taken there too: a stricter limit for a moment, never a looser one.)
      this.lost(err as Error);
      this.stats.decided.local += batch.length;
      for (const w of batch) w.resolve(this.local.takeAll(w.specs));
      return;
    }
    if (this.down) {
      this.down = false;
      this.health(true);
    }
    let at = 0;
    for (const run of runs) at += run[0]!.specs.length + 1;
    // The leases first: a request Redis refused is allowed from one granted meanwhile (below).
    const now = Date.now();
    for (const i of leaseRuns) {
      this.leased(names[i]!, caps[i]!, out[at] as number, (out[at + 1] as number) / 1000, now);
      at += 2;
    }
    at = 0;
    for (const run of runs) {
      const allowed = out[at] as number;
      const specs = run[0]!.specs;
      const n = specs.length;
      for (let j = 0; j < run.length; j++) {
        if (j >= allowed && this.leases.size > 0) {
          const leased = this.fromLeases(specs);
          if (leased) {
            run[j]!.resolve(leased);
            continue;
          }
        }
        this.stats.decided.redis++;
        // Tokens after this request's take, or, refused, after the run's allowed ones.
        const taken = Math.min(j + 1, allowed);
        const tokens = new Array<number>(n);
        for (let i = 0; i < n; i++) tokens[i] = ((out[at + 1 + i] as number) - 1000 * taken) / 1000;
        run[j]!.resolve(combine(specs, tokens, j < allowed));
      }
      at += n + 1;
    }
  }

  // For /readyz. Its answer counts as a call's: a process that only a load balancer polls still
  // reports Redis's loss and its return, and goes back to the shared buckets once Redis answers.
  async ping(): Promise<void> {
    if (this.wrongDb) throw this.wrongDb;
    try {
      await this.redis.ping();
    } catch (err) {
      this.lost(err as Error);
      throw err;
    }
    if (this.down) {
      this.down = false;
      this.health(true);
    }
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
