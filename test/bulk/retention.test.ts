// Retention: finished batches (with their items), expired idempotency rows and old completed crawl
// cycles (with their targets) are deleted; unfinished jobs, recent rows and the latest cycle stay.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts-repo.js';
import { loadConfig } from '../../src/config/config.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { runRetention, retentionTask } from '../../src/jobs/retention.js';
import { buildBulkServices } from '../../src/wiring/background.js';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';

const NOW = Date.parse('2025-06-30T12:00:00.000Z');
const DAY = 86_400_000;
const ago = (days: number) => new Date(NOW - days * DAY).toISOString();

for (const backend of backends()) {
  describe(`retention (${backend})`, () => {
    let t: TestStore;
    let accountId: string;
    const config = loadConfig({ LOG_LEVEL: 'silent', BATCH_RETENTION_DAYS: '30', CRAWL_RETENTION_DAYS: '14', CRAWL_INTERVAL_HOURS: '6' });
    const deps = () => ({ store: t.store, config, bulk: { ...buildBulkServices(config), clock: () => new Date(NOW) } });

    before(async () => {
      t = await createTestStore(backend);
      await migrateToLatest(t.store);
      accountId = (await createAccount(t.store.db, { name: 'r', planId: 'free' })).accountId;
      const db = t.store.db;
      const batch = (id: string, status: 'queued' | 'processing' | 'completed' | 'failed', completedDaysAgo: number | null, createdDaysAgo = 60) => ({
        id,
        account_id: accountId,
        operation: 'add' as const,
        status,
        total: 2,
        processed: 0,
        succeeded: 0,
        failed: 0,
        created_at: ago(createdDaysAgo),
        completed_at: completedDaysAgo === null ? null : ago(completedDaysAgo),
        error: null,
        attempts: 0,
        lease_owner: null,
        lease_expires_at: null,
      });
      await db
        .insertInto('watchlist_batches')
        .values([batch('old-done', 'completed', 40), batch('old-failed', 'failed', 31), batch('recent', 'completed', 5), batch('old-queued', 'queued', null), batch('old-running', 'processing', null)])
        .execute();
      for (const b of ['old-done', 'old-failed', 'recent', 'old-queued', 'old-running']) {
        await db
          .insertInto('watchlist_batch_items')
          .values([0, 1].map((position) => ({ batch_id: b, position, social_user_id: String(position + 1), username: null, status: 'pending' as const, error: null })))
          .execute();
      }
      await db
        .insertInto('idempotency_keys')
        .values([
          { account_id: accountId, key: 'old', request_hash: 'h', status_code: 201, response_body: '{}', created_at: ago(2) },
          { account_id: accountId, key: 'fresh', request_hash: 'h', status_code: 201, response_body: '{}', created_at: ago(0.5) },
        ])
        .execute();
      const cycle = (id: string, completedDaysAgo: number | null) => ({
        id,
        trigger: 'schedule' as const,
        slot: null,
        status: completedDaysAgo === null ? ('running' as const) : ('completed' as const),
        started_at: ago((completedDaysAgo ?? 0) + 0.1),
        completed_at: completedDaysAgo === null ? null : ago(completedDaysAgo),
        accounts_targeted: 1,
        accounts_completed: 1,
        accounts_failed: 0,
        tweets_ingested: 0,
        tweets_updated: 0,
        lock_version: 0,
      });
      await db.insertInto('crawl_cycles').values([cycle('c-old1', 40), cycle('c-old2', 20), cycle('c-recent', 3)]).execute();
      for (const c of ['c-old1', 'c-old2', 'c-recent']) {
        await db
          .insertInto('crawl_targets')
          .values({ id: `${c}:1`, cycle_id: c, social_user_id: '1', status: 'completed', tweets_ingested: 0, tweets_updated: 0, error: null, created_at: ago(40), started_at: null, completed_at: null, attempts: 1, lease_owner: null, lease_expires_at: null })
          .execute();
      }
    });
    after(() => t.dispose());

    test('deletes what is old and finished, keeps the rest, and a second pass finds nothing', async () => {
      const counts = await runRetention(deps());
      assert.deepEqual(counts, { batches: 2, batchItems: 4, idempotencyKeys: 1, crawlCycles: 2, crawlTargets: 2 });
      const db = t.store.db;
      const batches = (await db.selectFrom('watchlist_batches').select('id').orderBy('id').execute()).map((r) => r.id);
      assert.deepEqual(batches, ['old-queued', 'old-running', 'recent']);
      const items = await db.selectFrom('watchlist_batch_items').select('batch_id').execute();
      assert.equal(items.length, 6);
      assert.deepEqual((await db.selectFrom('idempotency_keys').select('key').execute()).map((r) => r.key), ['fresh']);
      assert.deepEqual((await db.selectFrom('crawl_cycles').select('id').execute()).map((r) => r.id), ['c-recent']);
      assert.deepEqual((await db.selectFrom('crawl_targets').select('cycle_id').execute()).map((r) => r.cycle_id), ['c-recent']);
      assert.deepEqual(await runRetention(deps()), { batches: 0, batchItems: 0, idempotencyKeys: 0, crawlCycles: 0, crawlTargets: 0 });
    });

    test('the latest completed cycle is kept however old; the periodic task logs its start and end with counts', async () => {
      const db = t.store.db;
      await db.deleteFrom('crawl_targets').execute();
      await db.deleteFrom('crawl_cycles').execute();
      await db
        .insertInto('crawl_cycles')
        .values({ id: 'c-only', trigger: 'schedule', slot: null, status: 'completed', started_at: ago(100), completed_at: ago(100), accounts_targeted: 0, accounts_completed: 0, accounts_failed: 0, tweets_ingested: 0, tweets_updated: 0, lock_version: 0 })
        .execute();
      const lines: Array<{ obj: Record<string, unknown>; msg: string }> = [];
      const log = { info: (obj: object, msg: string) => lines.push({ obj: obj as Record<string, unknown>, msg }), warn() {}, error() {} };
      const task = retentionTask(deps(), log);
      await task.run(new AbortController().signal);
      await task.run(new AbortController().signal); // within the interval: skipped
      assert.deepEqual(
        lines.map((l) => l.msg),
        ['retention started', 'retention finished'],
      );
      assert.equal(lines[1]!.obj.crawlCycles, 0);
      assert.deepEqual((await db.selectFrom('crawl_cycles').select('id').execute()).map((r) => r.id), ['c-only']);
    });
  });
}
