// Crash recovery with real processes: `sdg serve` is SIGKILLed while a crawl cycle and an export are
// both in progress, then started again. Both finish; nothing is counted or ingested twice; no partial
// export file is ever visible at its key.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { createAccount, createKey } from '../../src/accounts/accounts-repo.js';
import { exportObjectKey } from '../../src/exports/export-repo.js';
import { grant } from '../../src/credits/credits-repo.js';
import type { Tweet } from '../../src/domain/models.js';
import { tweetSeq } from '../../src/social/social-repo.js';
import { DemoSource } from '../../src/sources/demo/demo-source.js';
import { demoSample } from '../../src/sources/demo/sample.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';
import { startServer, type ServerProcess } from '../helpers/processes.js';

const DAY = 86_400_000;
const SYNTHETIC = 3_000;

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs: number, server?: ServerProcess): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${server ? `\n${server.output()}` : ''}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

for (const backend of backends()) {
  describe(`crash recovery with real processes (${backend})`, () => {
    let ts: TestStore;
    let server: ServerProcess | undefined;
    after(async () => {
      await server?.stop('SIGKILL');
      await ts.dispose();
    });

    let env: Record<string, string>;
    let apiKey: string;
    let accountId: string;
    let usernames: string[];
    let exportAuthors: string[];
    const dayStart = Math.floor((Date.now() - 30 * DAY) / DAY) * DAY;

    before(async () => {
      ts = await createTestStore(backend);
      await migrateToLatest(ts.store);
      const db = ts.store.db;
      ({ accountId } = await createAccount(db, { name: 'crash', planId: 'free', rateLimitPerMinute: 1_000_000 }));
      await grant(db, accountId, 1_000, 'test');
      apiKey = (await createKey(db, accountId, 'k')).key;
      const source = new DemoSource({ seed: 1, userCount: 2_000 });
      const sample = demoSample(source, new Date());
      usernames = sample.usernames;
      exportAuthors = sample.userIds.slice(0, 3);
      // Tweets a month old (out of the crawl's 7-day window, so the crawl never touches them) for the export.
      const template = (await source.getUserTweets(sample.userIds[0]!, { limit: 1 })).items[0]!;
      const rows = Array.from({ length: SYNTHETIC }, (_, i) => {
        const t: Tweet = { ...template, id: `9${String(i).padStart(18, '0')}`, authorId: exportAuthors[i % 3]!, createdAt: new Date(dayStart + i * 20_000).toISOString() };
        return { id: t.id, seq: tweetSeq(t.id), author_id: t.authorId, created_at: t.createdAt, data: JSON.stringify(t), metrics: JSON.stringify(t.metrics), fetched_at: t.createdAt };
      });
      for (let i = 0; i < rows.length; i += 500) await db.insertInto('tweets').values(rows.slice(i, i + 500)).execute();
      env = {
        ...ts.env,
        DEMO_USER_COUNT: '2000',
        DEMO_LATENCY_MS: '120',
        CRAWL_INTERVAL_HOURS: '24',
        CRAWL_CONCURRENCY: '1',
        JOBS_POLL_MS: '50',
        JOBS_LEASE_SECONDS: '1.5',
        EXPORT_PAGE_SIZE: '100',
        EXPORT_PAGE_DELAY_MS: '100',
      };
    });

    test('SIGKILL during a crawl cycle and an export; after a restart both complete exactly once', async () => {
      const db = ts.store.db;
      const api = (path: string, init: RequestInit = {}) =>
        fetch(`${server!.url}${path}`, { ...init, headers: { 'x-api-key': apiKey, 'content-type': 'application/json', ...(init.headers ?? {}) } });
      server = await startServer(env);

      const added = await api('/social/v1/bulk-export/watchlist/batch', { method: 'POST', body: JSON.stringify({ items: usernames.map((username) => ({ username })) }) });
      assert.equal(added.status, 202);
      const batchId = ((await added.json()) as { data: { batchId: string } }).data.batchId;
      await waitFor(
        'the batch',
        async () => ((await (await api(`/social/v1/bulk-export/watchlist/batch/${batchId}`)).json()) as { data: { status: string } }).data.status === 'completed',
        15_000,
        server,
      );
      const gen = await api('/social/v1/bulk-export/exports/generate', {
        method: 'POST',
        body: JSON.stringify({ startDate: new Date(dayStart).toISOString(), endDate: new Date(dayStart + DAY).toISOString() }),
      });
      assert.equal(gen.status, 202);
      const exportId = ((await gen.json()) as { data: { id: string } }).data.id;
      const finalPath = join(ts.dataDir, 'exports', exportObjectKey(accountId, exportId));
      const partialDir = join(ts.dataDir, 'exports', '.partial');

      // Both under way: the export is writing, the cycle has finished at least one account of five.
      await waitFor(
        'an export and a cycle in progress',
        async () => {
          const e = await db.selectFrom('exports').select('status').where('id', '=', exportId).executeTakeFirstOrThrow();
          const t = await db.selectFrom('crawl_targets').select('status').execute();
          const done = t.filter((x) => x.status === 'completed').length;
          const busy = t.filter((x) => x.status === 'running').length;
          return e.status === 'running' && done >= 1 && busy === 1 && existsSync(partialDir) && readdirSync(partialDir).length > 0;
        },
        15_000,
        server,
      );
      await server.stop('SIGKILL');
      server = undefined;

      const e1 = await db.selectFrom('exports').selectAll().where('id', '=', exportId).executeTakeFirstOrThrow();
      assert.equal(e1.status, 'running', 'killed mid-export');
      assert.equal(existsSync(finalPath), false, 'no partial file at the key');
      const c1 = await db.selectFrom('crawl_cycles').selectAll().execute();
      assert.equal(c1.length, 1);
      assert.equal(c1[0]!.status, 'running', 'killed mid-cycle');
      const open1 = await db.selectFrom('crawl_targets').select('id').where('status', 'in', ['pending', 'running']).execute();
      assert.ok(open1.length >= 1 && open1.length <= 4, `accounts left: ${open1.length}`);
      // The account being crawled when the process died (its lease is left to expire).
      const interrupted = await db.selectFrom('crawl_targets').select('id').where('status', '=', 'running').execute();

      server = await startServer(env);
      await waitFor(
        'both to complete after the restart',
        async () => {
          const e = await db.selectFrom('exports').select('status').where('id', '=', exportId).executeTakeFirstOrThrow();
          const c = await db.selectFrom('crawl_cycles').select('status').execute();
          return e.status === 'completed' && c.every((x) => x.status === 'completed');
        },
        30_000,
        server,
      );

      // The crawl: one cycle, every account once, its counters equal to the rows it stored.
      const cycles = await db.selectFrom('crawl_cycles').selectAll().execute();
      assert.equal(cycles.length, 1, 'the interrupted cycle resumed; no second cycle');
      const cycle = cycles[0]!;
      assert.deepEqual([cycle.accounts_targeted, cycle.accounts_completed, cycle.accounts_failed], [5, 5, 0]);
      const targets = await db.selectFrom('crawl_targets').selectAll().execute();
      assert.equal(targets.reduce((n, t) => n + t.tweets_ingested, 0), cycle.tweets_ingested);
      for (const i of interrupted) assert.equal(targets.find((t) => t.id === i.id)!.attempts, 2, 'the interrupted account was taken over');
      const crawled = Number((await db.selectFrom('tweets').select((eb) => eb.fn.countAll<number>().as('n')).where('id', 'not like', '9%').executeTakeFirstOrThrow()).n);
      assert.ok(crawled > 5 * 7 * 24, `${crawled} tweets`);
      assert.equal(cycle.tweets_ingested, crawled, 'every stored tweet counted exactly once');
      const status = (await (await api('/social/v1/bulk-export/crawl-status')).json()) as { data: { currentCycle: unknown; lastCompletedCycle: { tweetsIngested: number } } };
      assert.equal(status.data.currentCycle, null);
      assert.equal(status.data.lastCompletedCycle.tweetsIngested, crawled);

      // The export: written again from the start, complete and exact.
      const e2 = await db.selectFrom('exports').selectAll().where('id', '=', exportId).executeTakeFirstOrThrow();
      assert.equal(e2.attempts, 2);
      assert.equal(Number(e2.tweet_count), SYNTHETIC);
      const bytes = readFileSync(finalPath);
      assert.equal(bytes.length, Number(e2.size_bytes));
      assert.equal(createHash('sha256').update(bytes).digest('hex'), e2.sha256);
      const lines = gunzipSync(bytes).toString('utf8').trim().split('\n');
      assert.equal(lines.length, SYNTHETIC);
      assert.deepEqual(
        lines.map((l) => (JSON.parse(l) as Tweet).id),
        Array.from({ length: SYNTHETIC }, (_, i) => `9${String(i).padStart(18, '0')}`),
      );
      assert.deepEqual(readdirSync(partialDir), [], 'the crashed attempt’s partial file was removed');
      const link = (await (await api(`/social/v1/bulk-export/exports/${exportId}/download`)).json()) as { data: { url: string } };
      const file = await fetch(link.data.url);
      assert.equal(file.status, 200);
      assert.equal(Buffer.from(await file.arrayBuffer()).equals(bytes), true);

      assert.equal(await server.stop('SIGTERM'), 0, `SIGTERM stops the background roles cleanly: ${server.output()}`);
      server = undefined;
    });
  });
}

for (const backend of backends()) {
  describe(`two processes share the background work (${backend})`, () => {
    let ts: TestStore;
    const servers: ServerProcess[] = [];
    after(async () => {
      for (const s of servers) await s.stop('SIGKILL');
      await ts.dispose();
    });

    test('a cycle over many accounts: each account crawled once, counters equal to the rows', async () => {
      ts = await createTestStore(backend);
      await migrateToLatest(ts.store);
      const db = ts.store.db;
      const { accountId } = await createAccount(db, { name: 'two', planId: 'free', rateLimitPerMinute: 1_000_000 });
      const apiKey = (await createKey(db, accountId, 'k')).key;
      // Twelve public accounts of the demo network.
      const source = new DemoSource({ seed: 1, userCount: 2_000 });
      const ids: string[] = [];
      for (let i = 0; ids.length < 12; i++) {
        const p = await source.getUserById(source.net.userIds.encode(i)).catch(() => undefined);
        if (p && !p.protected) ids.push(p.id);
      }
      const env = { ...ts.env, DEMO_USER_COUNT: '2000', DEMO_LATENCY_MS: '60', CRAWL_INTERVAL_HOURS: '24', CRAWL_CONCURRENCY: '2', JOBS_POLL_MS: '50', CRAWL_BACKFILL_DAYS: '2' };
      // One API process per embedded store (api-role-lock.ts): the second runs the worker and scheduler alone.
      servers.push(...(await Promise.all([startServer(env), startServer({ ...env, ROLES: 'worker,scheduler' })])));
      const res = await fetch(`${servers[0]!.url}/social/v1/bulk-export/watchlist/batch`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ items: ids.map((socialUserId) => ({ socialUserId })) }),
      });
      assert.equal(res.status, 202);
      await waitFor(
        'the cycle',
        async () => {
          const c = await db.selectFrom('crawl_cycles').select('status').execute();
          return c.length > 0 && c.every((x) => x.status === 'completed');
        },
        30_000,
      );
      const cycles = await db.selectFrom('crawl_cycles').selectAll().execute();
      assert.equal(cycles.length, 1, 'one cycle, though two schedulers run');
      const targets = await db.selectFrom('crawl_targets').selectAll().execute();
      assert.equal(targets.length, 12);
      assert.ok(targets.every((t) => t.status === 'completed' && t.attempts === 1), 'no account crawled twice');
      const n = Number((await db.selectFrom('tweets').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
      assert.equal(cycles[0]!.tweets_ingested, n);
      assert.ok(n > 0);
    });
  });
}
