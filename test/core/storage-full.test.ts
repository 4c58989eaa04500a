// A full disk answers 503 service_unavailable, uncharged, not 500: it is the storage refusing
// writes, not a fault of the gateway. SQLite's max_page_count stands in for the disk in the first
// two tests (a write that needs a page beyond it fails with SQLITE_FULL, as on a full disk); the
// last fills a real one. The money stays exact across each.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createAccount, createKey } from '../../src/accounts/accounts-repo.js';
import { loadConfig } from '../../src/config/config.js';
import { openStore } from '../../src/db/connect.js';
import { buildApp } from '../../src/http/app.js';
import { buildDeps, closeDeps } from '../../src/wiring/deps.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { isStoreUnavailable } from '../../src/errors/store-unavailable.js';
import { getBalance, grant, ledgerSum } from '../../src/credits/credits-repo.js';
import { DemoSource, demoSample } from '../../src/sources/demo/index.js';
import { startHarness } from '../helpers/harness.js';
import { until } from '../helpers/processes.js';
import { notReadyState } from '../helpers/not-ready.js';

test('a full disk: charged calls answer 503 uncharged, the outage is reported, and the calls are served again after', async () => {
  const h = await startHarness('sqlite');
  try {
    const a = await h.account({ credits: 1_000_000 });
    const sqlite = h.deps.store.sqlite!;
    const { tweetIds } = demoSample(new DemoSource({ seed: h.config.source.demo.seed, userCount: h.config.source.demo.userCount }), new Date());
    const get = (i: number) => h.app.inject({ method: 'GET', url: `/social/v1/tweets/${tweetIds[i % tweetIds.length]}`, headers: { 'x-api-key': a.apiKey } });

    sqlite.pragma(`max_page_count = ${Number(sqlite.pragma('page_count', { simple: true }))}`);
    const statuses = new Map<number, number>();
    let charged = 0;
    // Twenty at once, so that a group commit carries several requests' writes (and charges).
    const answers = [];
    for (let i = 0; i < 400; i += 20) answers.push(...(await Promise.all(Array.from({ length: 20 }, (_, k) => get(i + k)))));
    for (const res of answers) {
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      charged += Number(res.headers['x-credits-charged'] ?? 0);
      if (res.statusCode === 200) continue;
      const body = JSON.parse(res.body) as { error: { code: string } };
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(body.error.code, 'service_unavailable');
      assert.equal(res.headers['retry-after'], '1');
      assert.equal(res.headers['x-credits-charged'], '0');
    }
    assert.ok((statuses.get(503) ?? 0) > 0, `the disk filled up: ${JSON.stringify([...statuses])}`);
    assert.equal(h.deps.store.outage!.down, true, 'the outage is reported');
    // Readiness says so, though a `select 1` answers.
    const ready = await h.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 503, ready.body);
    assert.deepEqual(notReadyState(ready), { status: 'store unavailable', reason: 'SQLITE_FULL' });

    sqlite.pragma('max_page_count = 1073741823');
    await until('the end of the outage seen by the probe', 5_000, () => !h.deps.store.outage!.down);
    assert.equal((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    const res = await get(400);
    assert.equal(res.statusCode, 200, res.body);
    charged += Number(res.headers['x-credits-charged']);
    const balance = (await getBalance(h.deps.store.db, a.accountId))!.balance;
    assert.equal(balance, 1_000_000 - charged, 'only the 200s were charged');
    assert.equal(await ledgerSum(h.deps.store.db, a.accountId), balance);
  } finally {
    await h.close();
  }
});

test("a full disk inside a Kysely transaction fails with SQLITE_FULL, not with its ROLLBACK's error", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdg-full-'));
  const store = openStore({ dataDir: dir });
  try {
    await migrateToLatest(store);
    const sqlite = store.sqlite!;
    sqlite.pragma(`max_page_count = ${Number(sqlite.pragma('page_count', { simple: true })) + 2}`);
    const err = await store.db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('settings').values({ key: 'small', value: 'x' }).execute();
        await trx.insertInto('settings').values({ key: 'large', value: 'x'.repeat(1 << 20) }).execute();
      })
      .then(
        () => undefined,
        (e: unknown) => e as { code?: string; message?: string },
      );
    // Before: SQLITE_ERROR "cannot rollback - no transaction is active", a 500.
    assert.equal(err?.code, 'SQLITE_FULL', err?.message);
    assert.equal(isStoreUnavailable(err), true);
    assert.equal(sqlite.inTransaction, false);
    assert.equal(await store.db.selectFrom('settings').select('key').where('key', '=', 'small').executeTakeFirst(), undefined, 'nothing of it kept');
    // A transaction that fails of itself is still rolled back.
    sqlite.pragma('max_page_count = 1073741823');
    await assert.rejects(
      store.db.transaction().execute(async (trx) => {
        await trx.insertInto('settings').values({ key: 'doomed', value: 'x' }).execute();
        throw new Error('no');
      }),
      /no/,
    );
    assert.equal(await store.db.selectFrom('settings').select('key').where('key', '=', 'doomed').executeTakeFirst(), undefined);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// A real full disk: a small tmpfs as DATA_DIR, filled by another file (root only, to mount it; CI
// runs as root). The same answers, and the outage's end seen by the probe once space is freed.
const asRoot = process.getuid?.() === 0;
test('a real full disk under DATA_DIR: 503s uncharged, the outage reported and over once space is freed', { skip: !asRoot && 'needs root to mount a tmpfs' }, async () => {
  const mnt = mkdtempSync(join(tmpdir(), 'sdg-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mnt]);
  const dataDir = join(mnt, 'data');
  const config = loadConfig({ LOG_LEVEL: 'silent', AUTH_FAILURES_PER_MINUTE: '1000000', DATA_DIR: dataDir });
  const store = openStore({ dataDir });
  const deps = await buildDeps(config, { store });
  const app = await buildApp(deps, { logger: false });
  try {
    const { accountId } = await createAccount(store.db, { name: 'full', planId: config.defaultPlanId, rateLimitPerMinute: 1_000_000 });
    await grant(store.db, accountId, 1_000_000, 'test');
    const { key } = await createKey(store.db, accountId, 'test');
    const { tweetIds } = demoSample(new DemoSource({ seed: config.source.demo.seed, userCount: config.source.demo.userCount }), new Date());
    let n = 0;
    let charged = 0;
    const call = async () => {
      const res = await app.inject({ method: 'GET', url: `/social/v1/tweets/${tweetIds[n++ % tweetIds.length]}`, headers: { 'x-api-key': key } });
      charged += Number(res.headers['x-credits-charged'] ?? 0);
      return res;
    };
    assert.equal((await call()).statusCode, 200);

    const junk = join(mnt, 'junk');
    const fd = openSync(junk, 'w');
    const block = Buffer.alloc(64 * 1024);
    assert.throws(() => {
      for (;;) writeSync(fd, block);
    }, /ENOSPC/);
    closeSync(fd);
    const refused = [];
    for (let i = 0; i < 10; i++) refused.push(...(await Promise.all(Array.from({ length: 20 }, () => call()))));
    for (const res of refused) {
      assert.equal(res.statusCode, 503, res.body);
      assert.equal((JSON.parse(res.body) as { error: { code: string } }).error.code, 'service_unavailable');
      assert.equal(res.headers['x-credits-charged'], '0');
    }
    assert.equal(store.outage!.cause, 'SQLITE_FULL');
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);

    rmSync(junk);
    await until('the probe wrote', 5_000, () => !store.outage!.down);
    assert.equal((await call()).statusCode, 200);
    const balance = (await getBalance(store.db, accountId))!.balance;
    assert.equal(balance, 1_000_000 - charged);
    assert.equal(charged, 200, 'two calls served, two charged');
    assert.equal(await ledgerSum(store.db, accountId), balance);
  } finally {
    await app.close();
    await closeDeps(deps).catch(() => undefined);
    execFileSync('umount', ['-l', mnt]);
    rmSync(mnt, { recursive: true, force: true });
  }
});
