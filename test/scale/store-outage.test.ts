// Postgres out of reach: calls answer 503 `service_unavailable` with Retry-After, uncharged (a 500
// says "a bug"), and the server serves again once Postgres is back, the ledger equal to the balance.
// The server reaches Postgres through a TCP proxy of the test's own, cut and restored. The outage is
// logged once with its cause, and its end once, not a line per refused call.
// Needs TEST_DATABASE_URL (skipped without).
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
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
    server = await startServer({ ...ts.env, DATABASE_URL: via.toString(), ROLES: 'api', LOG_LEVEL: 'info' });
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
      const r = await tweet();
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

    // The outage is logged once, with its cause; its refused calls are not logged one by one.
    const lines = () => server.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; cause?: { message?: string }; refused?: number; seconds?: number });
    const down = lines().filter((l) => l.msg.startsWith('storage cannot be reached'));
    assert.equal(down.length, 1, server.output());
    assert.ok(down[0]!.cause?.message, JSON.stringify(down[0]));
    assert.equal(lines().filter((l) => l.msg === 'request failed').length, 0, server.output());

    await tcp.open();
    await until('served again', 15_000, async () => (await tweet()).status === 200);
    // And its end once, when the probe gets an answer, with the count of calls it refused.
    await until('the end of the outage logged', 5_000, async () => lines().some((l) => l.msg.startsWith('storage answers again')));
    const up = lines().filter((l) => l.msg.startsWith('storage answers again'));
    assert.equal(up.length, 1, server.output());
    assert.ok(up[0]!.refused! >= statuses.filter((s) => s === 503).length, JSON.stringify(up[0]));
    // Every 2xx charged 100, and only those: the ledger equals the balance.
    const { balance } = (await getBalance(ts.store.db, accountId))!;
    assert.equal(await ledgerSum(ts.store.db, accountId), balance);
    const charges = await ts.store.db.selectFrom('ledger_entries').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).where('kind', '=', 'charge').executeTakeFirstOrThrow();
    assert.equal(balance, 10_000 - 100 * Number(charges.n));
  });
});
