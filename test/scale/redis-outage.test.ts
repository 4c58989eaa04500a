// Redis stopping and coming back: while it is gone each process limits calls with buckets of its own
// (calls go on, answered at once), it is reported once, and the shared buckets resume when it is back.
// Before, every keyed call answered 500 after waiting for reconnection attempts. Runs its own
// redis-server (stopped and started again by the test); skipped without TEST_REDIS_URL (.ci/run sets
// it) or without the redis-server program.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { RedisRateLimiter } from '../../src/ratelimit/redis-rate-limiter.js';
import { createPostgresSchema } from '../helpers/backends.js';
import { freePort, runSdg, startServer, until } from '../helpers/processes.js';
import { startHarness } from '../helpers/harness.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { notReadyState } from '../helpers/not-ready.js';

const tmpNone = tempDirs('sdg-redis-none-');

// A redis-server binary of our own to stop and start (TEST_REDIS_URL alone may be a Redis elsewhere).
const hasRedis = !!process.env.TEST_REDIS_URL && spawnSync('redis-server', ['--version']).status === 0;

/** A redis-server of the test's own on `port`; resolves once it accepts connections. */
async function redisServer(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  await until('redis-server accepts connections', 10_000, () => /Ready to accept connections/.test(out));
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise((res) => {
    child.once('exit', res);
    child.kill('SIGKILL');
  });
}

describe('rate limits while Redis is unreachable', { skip: !hasRedis }, () => {
  let port: number;
  let dir: string;
  let redis: ChildProcess;
  before(async () => {
    port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'sdg-redis-'));
    redis = await redisServer(port, dir);
  });
  after(async () => {
    await stop(redis);
    rmSync(dir, { recursive: true, force: true });
  });

  test('two processes share buckets; without Redis each keeps its own, answered at once; shared again once it is back', async () => {
    const url = `redis://127.0.0.1:${port}`;
    const a = new RedisRateLimiter(url, { prefix: 'sdg:test:' });
    const b = new RedisRateLimiter(url, { prefix: 'sdg:test:' });
    const heard: Array<[boolean, string | undefined]> = [];
    a.onHealthChange((reachable, err) => heard.push([reachable, err?.message]));
    const heardB: boolean[] = [];
    b.onHealthChange((reachable) => heardB.push(reachable));
    const allowed = async (l: RedisRateLimiter, key: string, perMinute: number) => (await l.takeAll([{ key, perMinute }])).allowed;
    try {
      // Shared: 3 a minute between both.
      assert.deepEqual([await allowed(a, 'k1', 3), await allowed(b, 'k1', 3), await allowed(a, 'k1', 3), await allowed(b, 'k1', 3)], [true, true, true, false]);

      await stop(redis);
      // The first call after the loss may wait for it to be noticed; then every call is decided at once.
      await allowed(a, 'warm', 100);
      await allowed(b, 'warm', 100);
      const t0 = performance.now();
      const local = [await allowed(a, 'k2', 2), await allowed(a, 'k2', 2), await allowed(a, 'k2', 2), await allowed(b, 'k2', 2), await allowed(b, 'k2', 2), await allowed(b, 'k2', 2)];
      const ms = performance.now() - t0;
      // Each process allows the full rate on its own, and still refuses beyond it.
      assert.deepEqual(local, [true, true, false, true, true, false]);
      assert.ok(ms < 100, `six calls without Redis took ${Math.round(ms)} ms`);
      assert.deepEqual(
        heard.map(([r]) => r),
        [false],
        'reported once',
      );

      redis = await redisServer(port, dir);
      // Back: a call succeeds through Redis, and the loss's end is reported once.
      await until('shared again', 10_000, async () => (await allowed(a, 'probe', 1000), heard.length === 2));
      assert.deepEqual(
        heard.map(([r]) => r),
        [false, true],
      );
      await until('b shared again', 10_000, async () => (await allowed(b, 'probe', 1000), heardB.length === 2));
      assert.deepEqual(heardB, [false, true]);
      assert.deepEqual([await allowed(a, 'k3', 2), await allowed(b, 'k3', 2), await allowed(a, 'k3', 2)], [true, true, false]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a Redis that stops answering on a live connection (paused, or cut off by a partition): calls are decided in the process, not held', async () => {
    const l = new RedisRateLimiter(`redis://127.0.0.1:${port}`, { prefix: 'sdg:test:' });
    const heard: boolean[] = [];
    l.onHealthChange((reachable) => heard.push(reachable));
    try {
      assert.equal((await l.takeAll([{ key: 'p1', perMinute: 2 }])).allowed, true);
      redis.kill('SIGSTOP');
      // Before, these waited for Redis to answer again: for as long as it was paused.
      const decided = await Promise.race([
        Promise.all([l.takeAll([{ key: 'p2', perMinute: 1 }]), l.takeAll([{ key: 'p2', perMinute: 1 }])]),
        new Promise<undefined>((r) => setTimeout(r, 5_000, undefined)),
      ]);
      assert.ok(decided, 'answered while Redis does not');
      assert.deepEqual(decided.map((d) => d.allowed), [true, false], 'by the process\'s own bucket');
      await assert.rejects(l.ping(), /timed out/i);
      assert.deepEqual(heard, [false]);
      redis.kill('SIGCONT');
      await until('shared again', 10_000, async () => (await l.takeAll([{ key: 'probe', perMinute: 1000 }]), heard.length === 2));
      assert.deepEqual(heard, [false, true]);
    } finally {
      if (redis.exitCode === null) redis.kill('SIGCONT');
      await l.close();
    }
  });

  test("readiness's ping reports the loss and the return, as a call would", async () => {
    const l = new RedisRateLimiter(`redis://127.0.0.1:${port}`, { prefix: 'sdg:test:' });
    const heard: boolean[] = [];
    l.onHealthChange((reachable) => heard.push(reachable));
    try {
      await l.ping();
      await stop(redis);
      await assert.rejects(l.ping());
      assert.deepEqual(heard, [false]);
      redis = await redisServer(port, dir);
      await until('the ping answered', 10_000, async () => l.ping().then(() => true, () => false));
      assert.deepEqual(heard, [false, true], 'the return heard with no call but the pings');
    } finally {
      await l.close();
    }
  });

  test('a server answers keyed calls with its own limits and headers while Redis is gone, and says so once', async () => {
    const data = mkdtempSync(join(tmpdir(), 'sdg-redis-srv-'));
    const env = { DATA_DIR: data, REDIS_URL: `redis://127.0.0.1:${port}`, ROLES: 'api', LOG_LEVEL: 'info' };
    const server = await startServer(env);
    try {
      const { apiKey } = JSON.parse((await runSdg(['accounts', 'create', '--name', 'r', '--credits', '1000', '--rate-limit-per-minute', '5', '--json'], env)).stdout) as { apiKey: string };
      const echo = () => fetch(`${server.url}/echo/v1/hello`, { headers: { 'x-api-key': apiKey } });
      assert.equal((await echo()).status, 200);
      await stop(redis);
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 7; i++) {
        last = await echo();
        statuses.push(last.status);
      }
      // No 500: the process's own buckets (5 a minute) allow, then refuse with 429.
      assert.ok(statuses.every((s) => s === 200 || s === 429), statuses.join(','));
      assert.equal(statuses.at(-1), 429, statuses.join(','));
      assert.equal(last!.headers.get('ratelimit-limit'), '5');
      assert.equal(last!.headers.get('ratelimit-remaining'), '0');
      await until('the loss is logged', 5_000, () => /Redis cannot be reached/.test(server.output()));
      assert.equal(server.output().match(/Redis cannot be reached/g)!.length, 1, server.output());
      assert.doesNotMatch(server.output(), /Unhandled error event/);
      redis = await redisServer(port, dir);
      await until('the return is logged', 15_000, async () => (await echo(), /Redis is reachable again/.test(server.output())));
    } finally {
      await server.stop();
      rmSync(data, { recursive: true, force: true });
    }
  });
});

test('a worker or scheduler alone does not use Redis: ready while REDIS_URL answers nothing', async () => {
  const port = await freePort();
  const h = await startHarness('sqlite', { ROLES: 'worker,scheduler', REDIS_URL: `redis://127.0.0.1:${port}` });
  try {
    assert.equal(h.deps.rateLimiter instanceof RedisRateLimiter, false);
    const ready = await h.app.inject({ url: '/readyz' });
    assert.equal(ready.statusCode, 200, ready.body);
  } finally {
    await h.close();
  }
});

test('Redis lost before anyone listens: the listener hears it when it starts listening', async () => {
  // A server builds the limiter, then runs migrations (on Postgres, tens of milliseconds) before
  // it listens: a refused first connection came before, and was never logged (2026-11-28).
  const l = new RedisRateLimiter(`redis://127.0.0.1:${await freePort()}`, { prefix: 'sdg:test:' });
  try {
    await assert.rejects(l.ping());
    const heard: Array<[boolean, string | undefined]> = [];
    l.onHealthChange((reachable, err) => heard.push([reachable, err?.message]));
    assert.equal(heard.length, 1, 'heard at once');
    assert.equal(heard[0]![0], false);
    assert.match(heard[0]![1] ?? '', /ECONNREFUSED/);
  } finally {
    await l.close();
  }
});

test('a server started while Redis cannot be reached says so once, at start, and serves keyed calls', async () => {
  // Nothing listens on the port: as with Redis down, or a wrong REDIS_URL, when the server starts.
  // On Postgres when there is one: its slower start is when the first refusal went unheard.
  const data = tmpNone();
  const pg = process.env.TEST_DATABASE_URL ? await createPostgresSchema(process.env.TEST_DATABASE_URL, 'redisnone') : undefined;
  const env = { DATA_DIR: data, ...(pg ? { DATABASE_URL: pg.url } : {}), REDIS_URL: `redis://127.0.0.1:${await freePort()}`, ROLES: 'api', LOG_LEVEL: 'info' };
  const server = await startServer(env);
  try {
    await until('the loss is logged', 5_000, () => /Redis cannot be reached/.test(server.output()));
    assert.match(server.output(), /ECONNREFUSED/, 'with the reason');
    const ready = await fetch(`${server.url}/readyz`);
    assert.equal(ready.status, 503, 'not ready while Redis is missing');
    assert.deepEqual(notReadyState({ statusCode: ready.status, body: await ready.text(), headers: Object.fromEntries(ready.headers) }), { status: 'redis unavailable' });
    const { apiKey } = JSON.parse((await runSdg(['accounts', 'create', '--name', 'r', '--credits', '1000', '--json'], env)).stdout) as { apiKey: string };
    assert.equal((await fetch(`${server.url}/echo/v1/hello`, { headers: { 'x-api-key': apiKey } })).status, 200);
    assert.equal(server.output().match(/Redis cannot be reached/g)!.length, 1, server.output());
  } finally {
    await server.stop();
    await pg?.drop();
  }
});
