// The shared rate limiter on a real Redis (TEST_REDIS_URL; .ci/run sets it).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { RedisRateLimiter } from '../../src/ratelimit/redis-rate-limiter.js';
import type { BucketSpecs, MultiDecision } from '../../src/ratelimit/rate-limiter.js';
import { errorOf, startHarness, type Harness } from '../helpers/harness.js';

const url = process.env.TEST_REDIS_URL;

/** Records the commands a limiter sends to Redis (each one's arguments), until `restore`. */
function spyCommands(limiter: unknown): { sent: unknown[][]; restore: () => void } {
  const redis = (limiter as { redis: { sendCommand: (...args: unknown[]) => unknown } }).redis;
  const send = redis.sendCommand.bind(redis);
  const sent: unknown[][] = [];
  redis.sendCommand = (...args: unknown[]) => {
    sent.push(((args[0] as { args?: unknown[] }).args ?? []) as unknown[]);
    return send(...args);
  };
  return {
    sent,
    restore: () => {
      redis.sendCommand = send;
    },
  };
}

if (url) {
  describe('Redis rate limiter', () => {
    const prefix = `sdg-test:${randomBytes(4).toString('hex')}:`;
    let a: RedisRateLimiter;
    let b: RedisRateLimiter;
    before(() => {
      a = new RedisRateLimiter(url, { prefix });
      b = new RedisRateLimiter(url, { prefix });
    });
    after(async () => {
      await a.close();
      await b.close();
    });

    test('two processes share one bucket per key: exactly the burst is allowed', async () => {
      const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).take('key_1', 10)));
      assert.equal(decisions.filter((d) => d.allowed).length, 10);
      const refused = decisions.find((d) => !d.allowed)!;
      assert.equal(refused.limit, 10);
      assert.equal(refused.remaining, 0);
      assert.ok(refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= 6, String(refused.retryAfterSeconds));
      assert.equal((await a.take('key_2', 10)).allowed, true, 'keys are separate');
    });

    test("one turn's requests are one script call, taken in order, each from all its buckets or none", async () => {
      const spy = spyCommands(a);
      try {
        // Account bucket of 3 shared by two keys of 5: the account's empties first; a refused request
        // takes nothing from its key's bucket either.
        const specs = (key: string): BucketSpecs => [
          { key, perMinute: 5 },
          { key: 'acct_4', perMinute: 3 },
        ];
        const decisions = await Promise.all([...Array.from({ length: 3 }, () => a.takeAll(specs('key_4a'))), ...Array.from({ length: 3 }, () => a.takeAll(specs('key_4b')))]);
        assert.equal(spy.sent.length, 1, 'one round trip for the turn');
        assert.deepEqual(
          decisions.map((d) => d.allowed),
          [true, true, true, false, false, false],
        );
        assert.deepEqual(
          decisions.map((d) => d.refused),
          [undefined, undefined, undefined, 1, 1, 1],
        );
        assert.equal(decisions[2]!.remaining, 0, 'the account bucket binds');
        // key_4b spent nothing: alone (its own account) it still has its whole burst of 5.
        const alone = await Promise.all(Array.from({ length: 6 }, () => b.takeAll([{ key: 'key_4b', perMinute: 5 }])));
        assert.deepEqual(
          alone.map((d) => d.allowed),
          [true, true, true, true, true, false],
        );
      } finally {
        spy.restore();
      }
    });

    test('inside Redis, a call runs the same commands whatever the number of its buckets: four, five when some bucket is not in this minute\'s hash', async (t) => {
      // Without leases: every request of a turn goes to Redis, whose accounting the test reads.
      const plain = new RedisRateLimiter(url, { prefix, leases: false });
      t.after(() => plain.close());
      // Redis's own count of the commands it ran (the tests run one file at a time).
      const redis = (plain as unknown as { redis: { info(s: string): Promise<string>; hget(k: string, f: string): Promise<string | null>; pttl(k: string): Promise<number>; time(): Promise<[string, string]> } }).redis;
      const stats = async () => {
        const text = await redis.info('commandstats');
        const calls = (cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(text)?.[1] ?? 0);
        return { time: calls('time'), hmget: calls('hmget'), hset: calls('hset'), pexpire: calls('pexpire') };
      };
      // 100 requests of one turn, two keys per account: 3 buckets, then 150; the commands Redis ran for them.
      const turn = async (accounts: number) => {
        const before = await stats();
        const decisions = await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            plain.takeAll([
              { key: `key_6_${accounts}_${i % (2 * accounts)}`, perMinute: 1_000 },
              { key: `acct_6_${accounts}_${i % accounts}`, perMinute: 1_000 },
            ]),
          ),
        );
        const after = await stats();
        const ran = Object.fromEntries(Object.entries(after).map(([c, v]) => [c, v - before[c as keyof typeof before]]));
        return { decisions, ran };
      };
      for (const accounts of [1, 50]) {
        // Both turns inside one minute of Redis's clock: near its end, wait for the next.
        const [sec] = await redis.time();
        if (Number(sec) % 60 >= 58) await new Promise((r) => setTimeout(r, (61 - (Number(sec) % 60)) * 1000));
        const { decisions, ran } = await turn(accounts);
        assert.equal(decisions.filter((d) => d.allowed).length, 100);
        // New buckets: this minute's hash lacks them, so the last minute's is read too.
        assert.deepEqual(ran, { time: 1, hmget: 2, hset: 1, pexpire: 1 }, `${accounts} accounts`);
        // The same buckets again within the minute: this minute's hash has them all.
        const again = await turn(accounts);
        assert.deepEqual(again.ran, { time: 1, hmget: 1, hset: 1, pexpire: 1 }, `${accounts} accounts, again`);
      }
      // A bucket is a field of this minute's hash, with the tokens left and when: the one account
      // gave 100 tokens in each of its two turns.
      const minute = Math.floor(Number((await redis.time())[0]) / 60);
      const value = (await redis.hget(`${prefix}${minute}`, 'acct_6_1_0')) ?? (await redis.hget(`${prefix}${minute - 1}`, 'acct_6_1_0'));
      const [tokens, at] = value!.split(':').map(Number);
      assert.ok(tokens! >= 800 && tokens! < 801, String(tokens));
      assert.ok(Math.abs(at! - Date.now()) < 60_000, String(at));
      const ttl = await redis.pttl(`${prefix}${minute}`);
      assert.ok(ttl > 0 && ttl <= 120_000, String(ttl));
    });

    test('a bucket last touched in the previous minute is read from its hash', async () => {
      const redis = (a as unknown as { redis: { time(): Promise<[string, string]>; hset(k: string, f: string, v: string): Promise<number> } }).redis;
      const redisNow = async () => {
        const [sec, micro] = await redis.time();
        return Number(sec) * 1000 + Math.floor(Number(micro) / 1000);
      };
      // Not within a second of the minute's end: the take must run in the same minute.
      if ((await redisNow()) % 60_000 > 59_000) await new Promise((r) => setTimeout(r, 1_100));
      const now = await redisNow();
      const minute = Math.floor(now / 60_000);
      // Emptied 1 ms ago, in the minute before this one's hash: at 60 a minute it has no token yet.
      await redis.hset(`${prefix}${minute - 1}`, 'key_7', `0:${now - 1}`);
      assert.equal((await a.take('key_7', 60)).allowed, false);
    });

    test('runs of requests with the same buckets are decided as one by one: the same allowed, remaining and refused bucket as the in-process limiter', async () => {
      const { MemoryRateLimiter } = await import('../../src/ratelimit/rate-limiter.js');
      const spy = spyCommands(a);
      const sent = spy.sent;
      try {
        // Two keys of one account (7 a minute), 5 and 4 a minute: runs of 3, 2, 4 and 3, interleaved.
        const x = (): BucketSpecs => [
          { key: 'key_8x', perMinute: 5 },
          { key: 'acct_8', perMinute: 7 },
        ];
        const y = (): BucketSpecs => [
          { key: 'key_8y', perMinute: 4 },
          { key: 'acct_8', perMinute: 7 },
        ];
        const order = [x, x, x, y, y, x, x, x, x, y, y, y];
        const got = await Promise.all(order.map((f) => a.takeAll(f())));
        const memory = new MemoryRateLimiter(() => 0);
        const want = order.map((f) => memory.takeAll(f()));
        const view = (d: { allowed: boolean; remaining: number; refused: number | undefined; limit: number }) => ({ allowed: d.allowed, remaining: d.remaining, refused: d.refused, limit: d.limit });
        assert.deepEqual(got.map(view), want.map(view));
        assert.equal(got.filter((d) => d.allowed).length, 7, 'the account bucket binds');
        // One call, four runs: the arguments grow with the runs, not the requests.
        assert.equal(sent.length, 1);
        // The script's hash, 0 keys, the prefix, 3 bucket names and their count, 4 runs of 7 (count,
        // reserve, buckets, two buckets' position and capacity) and their count; no lease under 100 a minute.
        assert.equal(sent[0]!.length, 2 + 1 + (1 + 3) + (1 + 4 * 7), sent[0]!.join(' '));
      } finally {
        spy.restore();
      }
    });

    test('a batch larger than one script call is split and still exact', async () => {
      const decisions = await Promise.all(Array.from({ length: 600 }, () => a.take('key_5', 450)));
      assert.equal(decisions.filter((d) => d.allowed).length, 450);
      assert.equal(decisions.slice(0, 450).every((d) => d.allowed), true, 'in the order asked');
    });

    test('a bucket far from empty lends this process a lease: its next requests are decided at once, without Redis', async () => {
      const c = new RedisRateLimiter(url, { prefix });
      // Connected, and the script known to Redis, before counting (too small a limit to lease).
      await c.take('lease_warm', 10);
      const spy = spyCommands(c);
      const take = () => c.takeAll([{ key: 'lease_1', perMinute: 10_000 }]);
      try {
        // 10,000 a minute: leases of 100.
        const first = take();
        assert.ok(first instanceof Promise);
        assert.equal((await first).allowed, true);
        assert.equal(spy.sent.length, 1);
        const local = Array.from({ length: 100 }, take);
        assert.ok(local.every((d) => !(d instanceof Promise) && d.allowed), 'the lease answers at once');
        assert.equal(spy.sent.length, 1, 'no call to Redis');
        // The bucket's tokens in Redis after the first request and the lease (10,000 - 1 - 100), plus
        // what is left of the lease: 100 after its first take, 0 after its last.
        assert.equal((local[0] as MultiDecision).remaining, 9_998);
        assert.equal((local[99] as MultiDecision).remaining, 9_899);
        // Spent: the next request asks Redis again.
        const next = take();
        assert.ok(next instanceof Promise);
        assert.equal((await next).allowed, true);
        assert.equal(spy.sent.length, 2);
      } finally {
        spy.restore();
        await c.close();
      }
    });

    test('leased tokens come from the shared bucket: one process allows exactly the burst, in order; two together no more', async () => {
      const c = new RedisRateLimiter(url, { prefix });
      const d = new RedisRateLimiter(url, { prefix });
      try {
        // 1,000 a minute (leases of 10, none once fewer than 100 would be left), 1,100 asked of one
        // process at once: five script calls, the first three each with a lease. Redis refuses 54 of
        // the fourth call's; 30 of them are allowed from the three leases.
        const one = await Promise.all(Array.from({ length: 1_100 }, () => c.take('lease_2', 1_000)));
        const allowed = one.filter((x) => x.allowed).length;
        // The bucket refills a token every 60 ms while the test runs.
        assert.ok(allowed >= 1_000 && allowed <= 1_010, String(allowed));
        assert.ok(one.slice(0, 1_000).every((x) => x.allowed), 'in the order asked');
        // Two processes, 50 requests each a turn, on a fresh bucket.
        let both = 0;
        for (let turn = 0; turn < 12; turn++) {
          const ds = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? c : d).take('lease_3', 1_000)));
          both += ds.filter((x) => x.allowed).length;
        }
        assert.ok(both <= 1_010, `never more than the burst: ${both}`);
        // Fewer only by what a lease still holds unspent (10 tokens each).
        assert.ok(both >= 980, String(both));
      } finally {
        await c.close();
        await d.close();
      }
    });

    test('below a tenth of the burst no lease is granted: every request is decided in Redis, as without leases', async () => {
      const c = new RedisRateLimiter(url, { prefix });
      const plain = new RedisRateLimiter(url, { prefix, leases: false });
      try {
        // 1,000 a minute: 905 taken, 95 left, under the reserve of 100.
        await Promise.all(Array.from({ length: 905 }, () => plain.take('lease_4', 1_000)));
        assert.equal((await c.take('lease_4', 1_000)).allowed, true);
        const again = c.takeAll([{ key: 'lease_4', perMinute: 1_000 }]);
        assert.ok(again instanceof Promise, 'no lease: asked of Redis');
        assert.equal((await again).allowed, true);
      } finally {
        await c.close();
        await plain.close();
      }
    });

    test('an unspent lease is dropped after its time', async () => {
      const c = new RedisRateLimiter(url, { prefix, leaseMs: 50 });
      try {
        assert.equal((await c.take('lease_5', 10_000)).allowed, true);
        assert.ok(!(c.takeAll([{ key: 'lease_5', perMinute: 10_000 }]) instanceof Promise), 'leased');
        await new Promise((r) => setTimeout(r, 80));
        const later = c.takeAll([{ key: 'lease_5', perMinute: 10_000 }]);
        assert.ok(later instanceof Promise, 'dropped: asked of Redis');
        assert.equal((await later).allowed, true);
      } finally {
        await c.close();
      }
    });

    test('the bucket refills with time', async () => {
      // 60 a minute = one token a second: emptying the bucket takes far less than that, even on a
      // loaded machine (at 600 a minute a slow run refilled a token before the check).
      for (let i = 0; i < 60; i++) await a.take('key_3', 60);
      assert.equal((await b.take('key_3', 60)).allowed, false);
      await new Promise((r) => setTimeout(r, 1_100));
      assert.equal((await b.take('key_3', 60)).allowed, true);
    });
  });

  describe('the gateway with REDIS_URL', () => {
    let h: Harness;
    before(async () => {
      h = await startHarness('sqlite', { REDIS_URL: url });
    });
    after(() => h.close());

    test('answers 429 from the shared bucket', async () => {
      assert.ok(h.deps.rateLimiter instanceof RedisRateLimiter);
      const acc = await h.account({ rateLimitPerMinute: 3 });
      const codes = [];
      for (let i = 0; i < 4; i++) codes.push((await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': acc.apiKey } })).statusCode);
      assert.deepEqual(codes, [200, 200, 200, 429]);
      const r = await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': acc.apiKey } });
      assert.equal(errorOf(r).code, 'rate_limited');
      assert.ok(Number(r.headers['retry-after']) >= 1);
    });

    test('an account far from its limit is served from a lease: one call to Redis, the headers counting down as one by one, /metrics saying where each was decided', async () => {
      const acc = await h.account({ rateLimitPerMinute: 10_000 });
      const series = async () => {
        const text = (await h.app.inject({ url: '/metrics' })).body;
        const value = (line: string) => Number(new RegExp(`^${line.replace(/[{}]/g, '\\$&')} (\\d+)$`, 'm').exec(text)?.[1]);
        return {
          lease: value('sdg_rate_limit_decisions_total{by="lease"}'),
          redis: value('sdg_rate_limit_decisions_total{by="redis"}'),
          calls: value('sdg_rate_limit_redis_calls_total'),
          leased: value('sdg_rate_limit_leased_tokens_total'),
        };
      };
      const before = await series();
      const spy = spyCommands(h.deps.rateLimiter);
      try {
        const remaining: number[] = [];
        for (let i = 0; i < 3; i++) {
          const r = await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': acc.apiKey } });
          assert.equal(r.statusCode, 200);
          remaining.push(Number(r.headers['ratelimit-remaining']));
        }
        assert.deepEqual(remaining, [9_999, 9_998, 9_997]);
        assert.equal(spy.sent.length, 1);
        const after = await series();
        assert.deepEqual(
          Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - before[k as keyof typeof before]])),
          { lease: 2, redis: 1, calls: 1, leased: 100 },
        );
      } finally {
        spy.restore();
      }
    });
  });
}

if (url) {
  test('REDIS_URL naming a database the server does not have: calls are limited in the process, readiness fails, and it is said once, never as reachable', async () => {
    const wrong = new URL(url);
    wrong.pathname = '/9999';
    const limiter = new RedisRateLimiter(wrong.toString(), { prefix: `sdg-test:${randomBytes(4).toString('hex')}:` });
    const said: Array<[boolean, string | undefined]> = [];
    limiter.onHealthChange((reachable, err) => said.push([reachable, err?.message]));
    try {
      // ioredis reports the SELECT's failure and goes on in database 0: before, the next call used
      // it and the process said Redis was reachable again.
      await new Promise((r) => setTimeout(r, 500));
      for (let i = 0; i < 5; i++) {
        const d = await limiter.takeAll([{ key: 'k', perMinute: 600 }]);
        assert.equal(d.allowed, true);
      }
      await assert.rejects(limiter.ping(), /REDIS_URL names a database this Redis server does not have/);
      assert.equal(said.length, 1, JSON.stringify(said));
      assert.equal(said[0]![0], false);
      assert.match(said[0]![1]!, /REDIS_URL names a database .*DB index is out of range/);
    } finally {
      await limiter.close();
    }
  });
}
