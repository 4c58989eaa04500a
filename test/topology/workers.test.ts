// WORKERS=N: one `sdg serve` as a cluster primary and N API worker processes on one port (src/cli/cluster.ts).
// The configuration checks run always; the processes run only with TEST_DATABASE_URL and TEST_REDIS_URL
// (WORKERS > 1 needs Postgres and Redis). With WORKERS=2: both workers hold client connections, the
// primary none; 4,000 charged calls on credits for exactly 1,000 give 1,000 successes and 3,000 402s;
// a worker killed with SIGKILL is replaced while the other keeps answering; SIGTERM on the primary
// lets a request in flight finish, stops every worker and exits 0.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/config/env.js';
import { createPostgresSchema } from '../helpers/backends.js';
import { runSdg, startServer, until, type ServerProcess } from '../helpers/processes.js';

const enabled = !!process.env.TEST_DATABASE_URL && !!process.env.TEST_REDIS_URL;
const PG = 'postgres://u@127.0.0.1:5432/db';
const REDIS = 'redis://127.0.0.1:6379';

describe('WORKERS: configuration', () => {
  test('default 1; 2 with DATABASE_URL and REDIS_URL', () => {
    assert.equal(loadConfig({}).workers, 1);
    assert.equal(loadConfig({ WORKERS: '1' }).workers, 1);
    assert.equal(loadConfig({ WORKERS: '2', DATABASE_URL: PG, REDIS_URL: REDIS }).workers, 2);
  });

  const refused: Array<[Record<string, string>, RegExp]> = [
    [{ WORKERS: '0' }, /^WORKERS must be an integer between 1 and \d+; got "0"/],
    [{ WORKERS: 'abc' }, /^WORKERS must be an integer/],
    [{ WORKERS: '1.5' }, /^WORKERS must be an integer/],
    [{ WORKERS: '2' }, /^WORKERS=2 needs DATABASE_URL and REDIS_URL \(DATABASE_URL and REDIS_URL not set\)/],
    [{ WORKERS: '2', DATABASE_URL: PG }, /^WORKERS=2 needs DATABASE_URL and REDIS_URL \(REDIS_URL not set\)/],
    [{ WORKERS: '2', REDIS_URL: REDIS }, /^WORKERS=2 needs DATABASE_URL and REDIS_URL \(DATABASE_URL not set\)/],
    [{ WORKERS: '2', DATABASE_URL: PG, REDIS_URL: REDIS, ROLES: 'worker,scheduler' }, /^WORKERS=2 .*ROLES .* does not include api/],
  ];
  for (const [env, re] of refused) {
    test(`refuses ${JSON.stringify(env)}`, () => {
      assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && re.test(e.message));
    });
  }

  test('`sdg serve` with WORKERS=2 on the embedded store stops the start with the reason and exit code 2', { timeout: 60_000 }, async () => {
    const r = await runSdg(['serve'], { WORKERS: '2', DATABASE_URL: '', REDIS_URL: '', PORT: '0' });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^sdg: WORKERS=2 needs DATABASE_URL and REDIS_URL .*credit meter.*rate limiter/m);
  });
});

interface Answer {
  status: number;
  body: string;
}

/** One HTTP GET; `agent: false` opens a connection of its own, closed after the answer. */
function get(url: string, headers: Record<string, string> = {}, agent: Agent | false = false): Promise<Answer> {
  return new Promise((res, rej) => {
    const req = request(url, { headers, agent }, (r) => {
      let body = '';
      r.setEncoding('utf8');
      r.on('data', (d: string) => (body += d));
      r.on('end', () => res({ status: r.statusCode!, body }));
      r.on('error', rej);
    });
    req.on('error', rej);
    // A connection that is never answered fails the test instead of hanging it.
    req.setTimeout(15_000, () => req.destroy(new Error(`no answer from ${url} in 15 s`)));
    req.end();
  });
}

/** The primary's children that are `sdg serve` workers (tsx's esbuild service is a child too). */
function workerPids(primary: number): number[] {
  let out = '';
  try {
    out = execFileSync('ps', ['--ppid', String(primary), '-o', 'pid=,stat=,args='], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there are none
  }
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 3 && !f[1]!.startsWith('Z') && f.slice(2).join(' ').includes('main.ts serve'))
    .map((f) => Number(f[0]));
}

/** The processes that hold established connections on `port` (ss -p), by pid. */
function connectionHolders(port: number): number[] {
  const out = execFileSync('ss', ['-tnpH', 'state', 'established', `( sport = :${port} )`], { encoding: 'utf8' });
  return [...new Set([...out.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1])))].sort();
}

/** Opens `n` keep-alive connections at once, and lists which processes hold their server ends. */
async function whoServes(url: string, n: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: n });
  try {
    const answers = await Promise.all(Array.from({ length: n }, () => get(`${url}/healthz`, {}, agent)));
    assert.deepEqual(answers.map((a) => a.status), Array(n).fill(200));
    return connectionHolders(Number(new URL(url).port));
  } finally {
    agent.destroy();
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** pids that logged that their server listens (LOG_LEVEL=info). */
const listeningPids = (output: string) =>
  new Set(
    output
      .split('\n')
      .filter((l) => l.includes('"Server listening at'))
      .map((l) => (JSON.parse(l) as { pid: number }).pid),
  );

describe('WORKERS=2: one `sdg serve`, two API processes on one port', { skip: !enabled && 'needs TEST_DATABASE_URL and TEST_REDIS_URL' }, () => {
  let schema: { url: string; drop(): Promise<void> };
  let server: ServerProcess;
  let db: pg.Client;
  let primary: number;
  let workers: number[];
  let stopped = false;
  const account = async (credits: number) => {
    const r = await runSdg(['accounts', 'create', '--name', 'workers', '--credits', String(credits), '--rate-limit-per-minute', '100000000', '--json'], { DATABASE_URL: schema.url });
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as { accountId: string; apiKey: string };
  };

  before(async () => {
    schema = await createPostgresSchema(process.env.TEST_DATABASE_URL!, 'wk');
    server = await startServer(
      {
        DATABASE_URL: schema.url,
        REDIS_URL: process.env.TEST_REDIS_URL!,
        WORKERS: '2',
        ROLES: 'api',
        // info: each worker logs "Server listening" with its pid (requests log at debug only).
        LOG_LEVEL: 'info',
        COSTS: JSON.stringify({ echoHello: 1, getTweet: 1 }),
        AUTH_FAILURES_PER_MINUTE: '1000000',
        // A slow source: a tweet lookup is a request that stays in flight (the SIGTERM test).
        DEMO_LATENCY_MS: '3000',
      },
      60_000,
    );
    primary = server.child.pid!;
    await until('"2 workers serving" from the primary', 30_000, () => server.output().includes('"msg":"2 workers serving"'));
    workers = workerPids(primary);
    db = new pg.Client({ connectionString: schema.url });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    if (server && !stopped) await server.stop('SIGKILL');
    for (const pid of workers ?? []) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await schema?.drop();
  });

  test('two worker processes, each listening; the connections are theirs, none the primary\'s', async () => {
    assert.equal(workers.length, 2, `children of ${primary}: ${execFileSync('ps', ['--ppid', String(primary), '-o', 'pid=,args='], { encoding: 'utf8' })}`);
    assert.deepEqual([...listeningPids(server.output())].sort(), [...workers].sort());
    // Round-robin: 8 connections opened together are handed to both workers alternately.
    assert.deepEqual(await whoServes(server.url, 8), [...workers].sort());
  });

  test('4,000 charged calls over 64 connections on credits for exactly 1,000: 1,000 succeed, 3,000 answer 402, balance 0, ledger = balance', async (tc) => {
    const a = await account(1_000);
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const counts = new Map<number, number>();
    let next = 0;
    try {
      await Promise.all(
        Array.from({ length: 64 }, async () => {
          for (let i = next++; i < 4_000; i = next++) {
            const r = await get(`${server.url}/echo/v1/hello`, { 'x-api-key': a.apiKey }, agent);
            counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
          }
        }),
      );
    } finally {
      agent.destroy();
    }
    tc.diagnostic(JSON.stringify(Object.fromEntries(counts)));
    assert.deepEqual(Object.fromEntries(counts), { 200: 1_000, 402: 3_000 });
    const bal = await get(`${server.url}/api/v1/credits/balance`, { 'x-api-key': a.apiKey });
    assert.equal(bal.status, 200, bal.body);
    assert.equal((JSON.parse(bal.body) as { data: { balance: number } }).data.balance, 0);
    const l = await db.query<{ sum: string; charges: string }>(
      `select coalesce(sum(amount), 0) as sum, count(*) filter (where kind = 'charge') as charges from ledger_entries where account_id = $1`,
      [a.accountId],
    );
    assert.equal(Number(l.rows[0]!.sum), 0, 'the ledger sums to the balance');
    assert.equal(Number(l.rows[0]!.charges), 1_000);
    const acc = await db.query<{ balance: string }>('select balance from accounts where id = $1', [a.accountId]);
    assert.equal(Number(acc.rows[0]!.balance), 0);
  });

  test('kill -9 one worker: the other keeps answering, and a replacement appears and serves', async () => {
    const a = await account(1_000);
    const [victim, survivor] = workers as [number, number];
    process.kill(victim, 'SIGKILL');
    // Node's cluster primary hands each accepted connection to a worker over IPC; one handed to a
    // worker that died before the primary noticed is lost (README, WORKERS). So the calls start once
    // the primary has logged the death, reaped the process and let its IPC channel close.
    await until('the primary noticing the death', 10_000, () => new RegExp(`"workerPid":${victim},.*worker died`).test(server.output()) && !workerPids(primary).includes(victim));
    await new Promise((r) => setTimeout(r, 250));
    for (let i = 0; i < 20; i++) {
      const r = await get(`${server.url}/echo/v1/hello`, { 'x-api-key': a.apiKey });
      assert.equal(r.status, 200, `call ${i}: ${r.body}`);
    }
    const now = await until('a replacement worker listening', 30_000, () => {
      const pids = workerPids(primary);
      return pids.length === 2 && pids.every((p) => listeningPids(server.output()).has(p)) && pids;
    });
    assert.ok(now.includes(survivor), 'the other worker kept running');
    const replacement = now.find((p) => p !== survivor)!;
    assert.ok(replacement !== victim);
    assert.match(server.output(), new RegExp(`"workerPid":${victim},.*"signal":"SIGKILL".*worker died: starting a replacement`));
    assert.deepEqual(await whoServes(server.url, 8), [...now].sort());
    workers = now;
  });

  test('SIGTERM on the primary: a request in flight finishes, every worker stops, the primary exits 0', async () => {
    const a = await account(1_000);
    const sample = JSON.parse((await runSdg(['demo', 'sample', '--json'], { DATABASE_URL: schema.url })).stdout) as { tweetIds: string[] };
    // The demo source takes 3 s to answer: the call is in flight when SIGTERM arrives.
    const inFlight = get(`${server.url}/social/v1/tweets/${sample.tweetIds[1]}`, { 'x-api-key': a.apiKey });
    await new Promise((r) => setTimeout(r, 800));
    const code = await server.stop('SIGTERM');
    stopped = true;
    const r = await inFlight;
    assert.equal(r.status, 200, r.body);
    assert.equal(code, 0, server.output().slice(-4_000));
    for (const pid of workers) assert.equal(alive(pid), false, `worker ${pid} still running`);
    assert.match(server.output(), /"msg":"all workers stopped"/);
  });
});

describe('WORKERS=2 with every role: the worker and scheduler run in one worker, and move with its replacement', { skip: !enabled && 'needs TEST_DATABASE_URL and TEST_REDIS_URL' }, () => {
  let schema: { url: string; drop(): Promise<void> };
  let server: ServerProcess;
  before(async () => {
    schema = await createPostgresSchema(process.env.TEST_DATABASE_URL!, 'wkr');
    server = await startServer({ DATABASE_URL: schema.url, REDIS_URL: process.env.TEST_REDIS_URL!, WORKERS: '2', ROLES: 'api,worker,scheduler', LOG_LEVEL: 'info' }, 60_000);
    await until('"2 workers serving" from the primary', 30_000, () => server.output().includes('"msg":"2 workers serving"'));
  });
  after(async () => {
    const primary = server?.child.pid;
    const left = primary ? workerPids(primary) : [];
    if (server) await server.stop('SIGKILL');
    for (const pid of left) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await schema?.drop();
  });

  /** pids that logged that their worker and scheduler started. */
  const backgroundPids = () =>
    server
      .output()
      .split('\n')
      .filter((l) => l.includes('"msg":"worker and scheduler started"'))
      .map((l) => (JSON.parse(l) as { pid: number }).pid);

  test('one worker runs them; when it is killed, its replacement runs them, and the other never does', async () => {
    const primary = server.child.pid!;
    const first = await until('the background roles started', 10_000, () => backgroundPids().length > 0 && backgroundPids());
    // The other worker is up too (it logged its listening); give it time to have started them, if it wrongly would.
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(backgroundPids().length, 1, server.output().slice(-3_000));
    const runner = first[0]!;
    const other = workerPids(primary).find((p) => p !== runner)!;
    assert.ok(other, 'two workers');
    process.kill(runner, 'SIGKILL');
    const now = await until('a replacement running the background roles', 30_000, () => backgroundPids().length === 2 && backgroundPids());
    assert.ok(now[1] !== runner && now[1] !== other, `the replacement (${now[1]}) runs them, not the other worker (${other})`);
    assert.ok(alive(other));
  });
});
