import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/config/env.js';

describe('configuration', () => {
  test('defaults serve on 127.0.0.1:8080 with the embedded store and the demo source', () => {
    const c = loadConfig({});
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.port, 8080);
    assert.equal(c.databaseUrl, undefined);
    assert.equal(c.source.kind, 'demo');
    assert.ok(c.dataDir.endsWith('/data'));
    assert.equal(c.costs.getTweet, 100);
    assert.equal(c.costs.getCrawlStatus, 0);
    assert.deepEqual(c.roles, ['api', 'worker', 'scheduler']);
    assert.equal(c.crawl.intervalHours, 6);
    // Unset: the store's own default (db/connect.ts), not a value that would look chosen.
    assert.equal(c.sqlitePageSize, undefined);
    assert.equal(loadConfig({ SQLITE_PAGE_SIZE: '16384' }).sqlitePageSize, 16_384);
    assert.equal(c.databasePoolSize, 10);
    assert.equal(loadConfig({ DATABASE_POOL_SIZE: '3' }).databasePoolSize, 3);
  });

  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'eighty' }, /PORT/],
    [{ PORT: '70000' }, /PORT/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    [{ DATABASE_URL: 'not a url' }, /DATABASE_URL/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ SOURCE: 'myspace' }, /SOURCE/],
    [{ SOURCE: 'x' }, /X_BEARER_TOKEN/],
    [{ COSTS: '{"getTweet":-1}' }, /COSTS\.getTweet/],
    [{ COSTS: '{"nope":1}' }, /COSTS names nope/],
    [{ COSTS: '[' }, /COSTS/],
    [{ CRAWL_INTERVAL_HOURS: '0' }, /CRAWL_INTERVAL_HOURS/],
    [{ ROLES: 'api,web' }, /ROLES/],
    [{ ROLES: ',' }, /ROLES lists no role/],
    [{ S3_ENDPOINT: 'http://127.0.0.1:9000' }, /S3_ENDPOINT is set but S3_BUCKET is not/],
    [{ S3_FORCE_PATH_STYLE: 'true' }, /S3_FORCE_PATH_STYLE is set but S3_BUCKET is not/],
    [{ ROLES: ' , ' }, /ROLES lists no role/],
    [{ SECRET: 'short' }, /SECRET/],
    [{ DEFAULT_PLAN: 'gold' }, /DEFAULT_PLAN/],
    [{ PLANS_FILE: '/nonexistent/plans.json' }, /PLANS_FILE/],
    [{ SQLITE_PAGE_SIZE: '5000' }, /SQLITE_PAGE_SIZE must be one of 4096, 8192, 16384, 32768, 65536/],
    [{ SQLITE_PAGE_SIZE: '1024' }, /SQLITE_PAGE_SIZE/],
    [{ DATABASE_POOL_SIZE: '0' }, /DATABASE_POOL_SIZE/],
    [{ DATABASE_POOL_SIZE: '2.5' }, /DATABASE_POOL_SIZE/],
    [{ DATABASE_POOL_SIZE: 'ten' }, /DATABASE_POOL_SIZE/],
  ];
  for (const [env, re] of bad) {
    test(`rejects ${JSON.stringify(env)} naming the variable`, () => {
      assert.throws(() => loadConfig(env), (e: unknown) => e instanceof ConfigError && re.test(e.message));
    });
  }

  test('fractional crawl intervals and cost overrides are accepted', () => {
    const c = loadConfig({ CRAWL_INTERVAL_HOURS: '0.001', COSTS: '{"getTweet":5}' });
    assert.equal(c.crawl.intervalHours, 0.001);
    assert.equal(c.costs.getTweet, 5);
    assert.equal(c.costs.getUserByUsername, 100);
  });

  test('PLANS_FILE replaces the plans and is validated', () => {
    const dir = mkdtempSync(join(tmpdir(), 'plans-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify([{ id: 'gold', name: 'Gold', priceCents: 100, currency: 'EUR', credits: 5, watchlistLimit: 1, rateLimitPerMinute: 60, description: 'g' }]));
    const c = loadConfig({ PLANS_FILE: good });
    assert.deepEqual(c.plans.map((p) => p.id), ['gold']);
    assert.equal(c.defaultPlanId, 'gold');
    const badFile = join(dir, 'bad.json');
    writeFileSync(badFile, JSON.stringify([{ id: 'gold', name: 'Gold' }]));
    assert.throws(() => loadConfig({ PLANS_FILE: badFile }), /PLANS_FILE/);
  });
});
