// Postgres out of reach: calls answer 503 `service_unavailable` with Retry-After, uncharged (a 500
// says "a bug"), and the server serves again once Postgres is back, the ledger equal to the balance.
// The server (API, worker and scheduler in one process) reaches Postgres through a TCP proxy of the
// test's own, cut and restored. The outage is logged once with its cause, and its end once, not a
// line per refused call or per failed poll of the background jobs.
// Needs TEST_DATABASE_URL (skipped without).
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { openStore } from '../../src/db/connect.js';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { classifyError } from '../../src/http/error-handler.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestStore, type TestStore } from '../helpers/backends.js';
import { freePort, runSdg, startServer, until, type ServerProcess } from '../helpers/processes.js';

const pgUrl = process.env.TEST_DATABASE_URL;

test('store failures classify as 503 service_unavailable with Retry-After; other errors stay 500', () => {
  const cases: Array<[Error, string]> = [
    [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), 'service_unavailable'],
    [Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }), 'service_unavailable'],
    [Object.assign(new Error('the database system is starting up'), { code: '57P03' }), 'service_unavailable'],
    [Object.assign(new Error('connection failure'), { code: '08006' }), 'service_unavailable'],
    [new Error('Connection terminated unexpectedly'), 'service_unavailable'],
    [Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }), 'service_unavailable'],
    [Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }), 'service_unavailable'],
    [Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }), 'service_unavailable'],
    [Object.assign(new Error('attempt to write a readonly database'), { code: 'SQLITE_READONLY' }), 'service_unavailable'],
    [Object.assign(new Error('could not extend file: No space left on device'), { code: '53100' }), 'service_unavailable'],
    [Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' }), 'service_unavailable'],
    [Object.assign(new Error('no such table: x'), { code: 'SQLITE_ERROR' }), 'internal_error'],
    [Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' }), 'internal_error'],
    [Object.assign(new Error('duplicate key value'), { code: '23505' }), 'internal_error'],
    [new TypeError("Cannot read properties of undefined (reading 'x')"), 'internal_error'],
  ];
  for (const [err, code] of cases) {
    const { appError, internal } = classifyError(err);
    assert.equal(appError.code, code, err.message);
    assert.equal(internal, code === 'internal_error', err.message);
    if (code === 'service_unavailable') {
      assert.equal(appError.status, 503);
      assert.equal(appError.headers?.['retry-after'], '1');
    }
  }
});

/** A TCP proxy to `port` that can be cut (listener closed, every connection destroyed) and restored. */
async function proxy(listenPort: number, port: number) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const open = () =>
    new Promise<void>((res, rej) => {
      server = createServer((client) => {
        const upstream = connect(port, '127.0.0.1');
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      server.once('error', rej);
      server.listen(listenPort, '127.0.0.1', () => res());
    });
  await open();
  return {
    open,
    async cut() {
      await new Promise<void>((res) => {
        server!.close(() => res());
        for (const s of sockets) s.destroy();
      });
    },
  };
}

describe('Postgres out of reach (postgres)', { skip: !pgUrl }, () => {
  let ts: TestStore;
  let server: ServerProcess;
  let tcp: Awaited<ReturnType<typeof proxy>>;
  before(async () => {
    ts = await createTestStore('postgres');
    await migrateToLatest(ts.store);
    const real = new URL(ts.env.DATABASE_URL!);
    const port = await freePort();
    tcp = await proxy(port, Number(real.port || 5432));
    const via = new URL(real);
    via.port = String(port);
    server = await startServer({ ...ts.env, DATABASE_URL: via.toString(), ROLES: 'api,worker,scheduler', LOG_LEVEL: 'info' });
  });
  after(async () => {
    await server.stop();
    await tcp.cut().catch(() => undefined);
    await ts.dispose();
  });

  test('503 with Retry-After and nothing charged while it is gone; served again once it is back', async () => {
    const { apiKey, accountId } = JSON.parse((await runSdg(['accounts', 'create', '--name', 'down', '--credits', '10000', '--json'], ts.env)).stdout) as { apiKey: string; accountId: string };
    const { tweetIds } = JSON.parse((await runSdg(['demo', 'sample', '--json'], ts.env)).stdout) as { tweetIds: string[] };
    const tweet = () => fetch(`${server.url}/social/v1/tweets/${tweetIds[0]}`, { headers: { 'x-api-key': apiKey } });
    assert.equal((await tweet()).status, 200);

    await tcp.cut();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await tweet().catch((e: unknown) => { throw new Error(`${String(e)}: ${server.output().slice(-3000)}`); });
      statuses.push(r.status);
      if (r.status !== 200) {
        assert.equal(r.status, 503, await r.clone().text());
        const body = (await r.json()) as { error: { code: string } };
        assert.equal(body.error.code, 'service_unavailable');
        assert.equal(r.headers.get('retry-after'), '1');
        assert.equal(r.headers.get('x-credits-charged'), '0');
      }
    }
    assert.ok(statuses.includes(503), statuses.join(','));
    assert.equal(server.child.exitCode, null, server.output());
    // Readiness says so, polled as a load balancer would, without a log line per poll.
    for (let i = 0; i < 3; i++) assert.equal((await fetch(`${server.url}/readyz`)).status, 503);

    // The outage is logged once, with its cause; its refused calls are not logged one by one.
    const lines = () => server.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; cause?: { message?: string }; failures?: number; seconds?: number });
    const down = lines().filter((l) => l.msg.startsWith('storage unavailable'));
    assert.equal(down.length, 1, server.output());
    assert.ok(down[0]!.cause?.message, JSON.stringify(down[0]));
    assert.equal(lines().filter((l) => l.msg === 'request failed').length, 0, server.output());
    // Nor are the background jobs' failed polls (every 250 ms for each job kind and periodic task:
    // 80 lines with stacks in 5 s before): the same one report covers them.
    await new Promise((r) => setTimeout(r, 1_500));
    const jobLines = lines().filter((l) => /could not claim a job|periodic task failed|failed; it will be retried/.test(l.msg));
    assert.equal(jobLines.length, 0, JSON.stringify(jobLines.slice(0, 3)));
    assert.equal(lines().filter((l) => l.msg.startsWith('storage unavailable')).length, 1);

    await tcp.open();
    await until('served again', 15_000, async () => (await tweet()).status === 200);
    // And its end once, when the probe gets an answer, with the count of failures (the refused calls among them).
    await until('the end of the outage logged', 5_000, async () => lines().some((l) => l.msg.startsWith('storage answers again')));
    const up = lines().filter((l) => l.msg.startsWith('storage answers again'));
    assert.equal(up.length, 1, server.output());
    assert.ok(up[0]!.failures! >= statuses.filter((s) => s === 503).length, JSON.stringify(up[0]));
    // Every 2xx charged 100, and only those: the ledger equals the balance.
    const { balance } = (await getBalance(ts.store.db, accountId))!;
    assert.equal(await ledgerSum(ts.store.db, accountId), balance);
    const charges = await ts.store.db.selectFrom('ledger_entries').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).where('kind', '=', 'charge').executeTakeFirstOrThrow();
    assert.equal(balance, 10_000 - 100 * Number(charges.n));
  });
});

describe('a Postgres connection lost while checked out (postgres)', { skip: !pgUrl }, () => {
  test('fails the transaction that holds it, not the process; the store serves again', async () => {
    const ts = await createTestStore('postgres');
    const real = new URL(ts.env.DATABASE_URL!);
    const port = await freePort();
    const tcp = await proxy(port, Number(real.port || 5432));
    const via = new URL(real);
    via.port = String(port);
    const store = openStore({ databaseUrl: via.toString(), dataDir: '.' });
    try {
      // A transaction between two statements: its client is out of the pool, which then listens to
      // it no more. Its connection's 'error' event went to nobody and ended the process.
      let started!: () => void;
      const inside = new Promise<void>((r) => (started = r));
      let go!: () => void;
      const gate = new Promise<void>((r) => (go = r));
      const tx = store.db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        started();
        await gate;
        await sql`select 1`.execute(trx);
      });
      await inside;
      await tcp.cut();
      await new Promise((r) => setTimeout(r, 300));
      go();
      await assert.rejects(tx);
      await tcp.open();
      await until('the store answers again', 10_000, async () => {
        try {
          await sql`select 1`.execute(store.db);
          return true;
        } catch {
          return false;
        }
      });
    } finally {
      await store.close();
      await tcp.cut().catch(() => undefined);
      await ts.dispose();
    }
  });
});

describe('readiness while Postgres is out of reach (postgres)', { skip: !pgUrl }, () => {
  test('an API process polled only on /readyz reports the outage once, and not each poll', async () => {
    const ts = await createTestStore('postgres');
    await migrateToLatest(ts.store);
    const real = new URL(ts.env.DATABASE_URL!);
    const port = await freePort();
    const tcp = await proxy(port, Number(real.port || 5432));
    const via = new URL(real);
    via.port = String(port);
    // The API role alone: no background job reports the outage in its place.
    const server = await startServer({ ...ts.env, DATABASE_URL: via.toString(), ROLES: 'api', LOG_LEVEL: 'info' });
    try {
      assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
      await tcp.cut();
      for (let i = 0; i < 4; i++) assert.equal((await fetch(`${server.url}/readyz`)).status, 503);
      const lines = () => server.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string });
      assert.equal(lines().filter((l) => l.msg.startsWith('storage unavailable')).length, 1, server.output());
      assert.equal(lines().filter((l) => l.msg === 'request failed').length, 0, server.output());
      await tcp.open();
      await until('ready again', 10_000, async () => (await fetch(`${server.url}/readyz`)).status === 200);
      await until('the end logged', 5_000, async () => lines().some((l) => l.msg.startsWith('storage answers again')));
    } finally {
      await server.stop();
      await tcp.cut().catch(() => undefined);
      await ts.dispose();
    }
  });
});
