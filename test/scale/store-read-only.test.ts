// Postgres that answers but refuses writes, as a standby does (or a primary failed over to one,
// or a cluster set read-only while its disk is full): the charged calls answer 503
// `service_unavailable`, uncharged, not 500; the outage's probe is a write, so the outage lasts
// while writes are refused though every `select 1` answers; once writes are accepted again the
// calls are served and the ledger equals the balance. The refusal is real: the gateway's role gets
// `default_transaction_read_only` and its sessions are ended, so the pool's new ones are read-only.
// Needs TEST_DATABASE_URL (skipped without).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import pg from 'pg';
import { sql } from 'kysely';
import { createAccount, createKey } from '../../src/accounts/accounts-repo.js';
import { loadConfig } from '../../src/config/config.js';
import { getBalance, grant, ledgerSum } from '../../src/credits/credits-repo.js';
import { openStore } from '../../src/db/connect.js';
import { buildApp } from '../../src/http/app.js';
import { DemoSource, demoSample } from '../../src/sources/demo/index.js';
import { buildDeps, closeDeps } from '../../src/wiring/deps.js';
import { until } from '../helpers/processes.js';
import { notReadyState } from '../helpers/not-ready.js';

const pgUrl = process.env.TEST_DATABASE_URL;

describe('Postgres refusing writes (postgres)', { skip: !pgUrl }, () => {
  test('503 uncharged while writes are refused, the outage kept while they are, served again after', { timeout: 60_000 }, async () => {
    const role = `sdg_ro_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    const dataDir = mkdtempSync(join(tmpdir(), 'sdg-ro-'));
    await admin.query(`create role ${role} login`);
    await admin.query(`create schema ${role} authorization ${role}`);
    const url = new URL(pgUrl!);
    url.username = role;
    url.searchParams.set('options', `-c search_path=${role}`);
    const endSessions = () => admin.query('select pg_terminate_backend(pid) from pg_stat_activity where usename = $1', [role]);
    const config = loadConfig({ LOG_LEVEL: 'silent', AUTH_FAILURES_PER_MINUTE: '1000000', DATABASE_URL: url.toString(), DATA_DIR: dataDir });
    const store = openStore({ databaseUrl: url.toString(), dataDir });
    const deps = await buildDeps(config, { store });
    const app = await buildApp(deps, { logger: false });
    try {
      await app.ready();
      const { accountId } = await createAccount(store.db, { name: 'ro', planId: config.defaultPlanId, rateLimitPerMinute: 1_000_000 });
      await grant(store.db, accountId, 100_000, 'test');
      const { key } = await createKey(store.db, accountId, 'test');
      const { tweetIds } = demoSample(new DemoSource({ seed: config.source.demo.seed, userCount: config.source.demo.userCount }), new Date());
      let n = 0;
      const call = () => app.inject({ method: 'GET', url: `/social/v1/tweets/${tweetIds[n++ % tweetIds.length]}`, headers: { 'x-api-key': key } });
      let charged = 0;
      const served = async () => {
        const res = await call();
        assert.equal(res.statusCode, 200, res.body);
        charged += Number(res.headers['x-credits-charged']);
      };
      await served();

      await admin.query(`alter role ${role} set default_transaction_read_only = on`);
      await endSessions();
      const refused = [];
      for (let i = 0; i < 4; i++) refused.push(...(await Promise.all(Array.from({ length: 10 }, () => call()))));
      for (const res of refused) {
        charged += Number(res.headers['x-credits-charged'] ?? 0);
        if (res.statusCode === 200) continue; // an in-process cache answered without a write? then it was charged and counted
        assert.equal(res.statusCode, 503, res.body);
        assert.equal((JSON.parse(res.body) as { error: { code: string } }).error.code, 'service_unavailable');
        assert.equal(res.headers['retry-after'], '1');
        assert.equal(res.headers['x-credits-charged'], '0');
      }
      assert.ok(refused.filter((r) => r.statusCode === 503).length >= 35, `refused: ${refused.map((r) => r.statusCode).join(' ')}`);
      assert.equal(store.outage!.down, true, 'the outage is reported');
      // Reads answer meanwhile; the probe writes, so the outage is not taken as over.
      assert.equal((await sql<{ one: number }>`select 1 as one`.execute(store.db)).rows[0]!.one, 1);
      await new Promise((r) => setTimeout(r, 2_500));
      assert.equal(store.outage!.down, true, 'still refusing writes: still out');
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 503, ready.body);
      assert.equal(notReadyState(ready).status, 'store unavailable');

      await admin.query(`alter role ${role} reset default_transaction_read_only`);
      await endSessions();
      await until('the probe wrote', 10_000, () => !store.outage!.down);
      assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
      for (let i = 0; i < 3; i++) await served();
      const balance = (await getBalance(store.db, accountId))!.balance;
      assert.equal(balance, 100_000 - charged, 'only the served calls were charged');
      assert.equal(await ledgerSum(store.db, accountId), balance);
    } finally {
      await app.close();
      await closeDeps(deps).catch(() => undefined);
      await endSessions().catch(() => undefined);
      await admin.query(`drop schema if exists ${role} cascade`);
      await admin.query(`drop role if exists ${role}`);
      await admin.end();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
