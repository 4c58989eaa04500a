// A Postgres connection lost while idle in the pool (Postgres restarted, a backend terminated by an
// administrator or a timeout) is dropped and logged; the server stays up and its next queries open
// new connections. Without a listener, the pool's 'error' event ended the process.
// Needs TEST_DATABASE_URL (skipped without).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestStore, type TestStore } from '../helpers/backends.js';
import { runSdg, startServer, until, type ServerProcess } from '../helpers/processes.js';

const pgUrl = process.env.TEST_DATABASE_URL;
const APP = 'sdg_connection_lost_test';

describe('a pooled Postgres connection lost while idle (postgres)', { skip: !pgUrl }, () => {
  let ts: TestStore;
  let server: ServerProcess;
  before(async () => {
    ts = await createTestStore('postgres');
    await migrateToLatest(ts.store);
    // The server's connections carry a name of their own, so that only they are terminated.
    const url = new URL(ts.env.DATABASE_URL!);
    url.searchParams.set('application_name', APP);
    server = await startServer({ ...ts.env, DATABASE_URL: url.toString(), ROLES: 'api' });
  });
  after(async () => {
    await server.stop();
    await ts.dispose();
  });

  test('the server keeps serving, charged calls included, and says what happened', async () => {
    const { apiKey } = JSON.parse((await runSdg(['accounts', 'create', '--name', 'lost', '--credits', '1000', '--json'], ts.env)).stdout) as { apiKey: string };
    const { tweetIds } = JSON.parse((await runSdg(['demo', 'sample', '--json'], ts.env)).stdout) as { tweetIds: string[] };
    const tweet = () => fetch(`${server.url}/social/v1/tweets/${tweetIds[0]}`, { headers: { 'x-api-key': apiKey } });
    // A charged call: connections open in the store's pool and in the group charges' pool.
    assert.equal((await tweet()).status, 200);

    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    try {
      const killed = await admin.query<{ n: number }>(`select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1) t`, [APP]);
      assert.ok(killed.rows[0]!.n >= 2, `the server's connections were found: ${killed.rows[0]!.n}`);
    } finally {
      await admin.end();
    }
    await until('the loss is logged', 5_000, () => /a Postgres connection was lost while idle/.test(server.output()));
    // The error alone: not the pg client that pg-pool hangs on it (its settings, its statements' text).
    for (const line of server.output().split('\n').filter((l) => l.includes('lost while idle'))) {
      const entry = JSON.parse(line) as { err: { message: string; client?: unknown } };
      assert.match(entry.err.message, /terminat/i);
      assert.equal(entry.err.client, undefined, line.slice(0, 300));
      assert.ok(line.length < 2_000, `${line.length} characters`);
    }

    assert.equal(server.child.exitCode, null, `the server is still running: ${server.output()}`);
    const again = await tweet();
    assert.equal(again.status, 200, await again.clone().text());
    assert.equal(again.headers.get('x-credits-charged'), '100');
    assert.equal(again.headers.get('x-credits-remaining'), '800');
  });
});
