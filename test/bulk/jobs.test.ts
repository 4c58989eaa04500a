// Job leases (one claim wins, expired leases are taken over, a lost lease commits nothing) and the
// background roles started and stopped in-process.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { performCrawlTarget } from '../../src/crawl/crawl-job.js';
import { finishTarget, targetLease } from '../../src/crawl/crawl-repo.js';
import { crawlTick } from '../../src/crawl/crawl-scheduler.js';
import { drainBulkWork } from '../../src/wiring/drain-jobs.js';
import { callSource } from '../../src/sources/resilience.js';
import { startBackground } from '../../src/wiring/background.js';
import { SourceError } from '../../src/sources/types.js';
import { exportLease } from '../../src/exports/export-repo.js';
import { claimById, claimNext, LeaseLostError, releaseLease, renewLease } from '../../src/jobs/lease.js';
import { backends } from '../helpers/backends.js';
import { json, type TestAccount } from '../helpers/harness.js';
import { BASE, bulkHarness, call, HOUR, T0, type BulkHarness } from './helpers.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const backend of backends()) {
  describe(`jobs and leases (${backend})`, () => {
    let b: BulkHarness;
    let a: TestAccount;
    before(async () => {
      b = await bulkHarness(backend, { JOBS_POLL_MS: '20', JOBS_LEASE_SECONDS: '1' });
      a = await b.h.account();
    });
    after(() => b.h.close());

    test('one claim wins; renewals and releases need the lease; an expired lease is taken over', async () => {
      const db = b.h.deps.store.db;
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await call(b.h, a, 'POST', `${BASE}/exports/generate`, { startDate: '2025-06-01T00:00:00Z', endDate: `2025-06-01T0${i + 1}:00:00Z` });
        ids.push(json<{ data: { id: string } }>(r).data.id);
      }
      const claims = await Promise.all(Array.from({ length: 8 }, (_, i) => claimNext(db, exportLease, `w${i}`, 60_000)));
      const won = claims.filter((c) => c !== undefined);
      assert.equal(won.length, 3);
      assert.deepEqual(new Set(won.map((c) => c.id)), new Set(ids));
      const c = won[0]!;
      assert.equal(c.attempts, 1);
      assert.equal(await claimById(db, exportLease, c.id, 'intruder', 60_000), undefined);
      assert.equal(await renewLease(db, exportLease, { ...c, owner: 'intruder' }, 60_000), false);
      assert.equal(await renewLease(db, exportLease, c, 60_000), true);
      // The holder "dies": its lease runs out and another worker takes the row, attempt 2.
      const later = Date.now() + 61_000;
      const taken = await claimById(db, exportLease, c.id, 'w-new', 60_000, later);
      assert.ok(taken);
      assert.equal(taken.attempts, 2);
      assert.equal(await renewLease(db, exportLease, c, 60_000), false, 'the old holder lost it');
      await releaseLease(db, exportLease, taken);
      const row = await db.selectFrom('exports').select(['status', 'lease_owner', 'attempts']).where('id', '=', c.id).executeTakeFirstOrThrow();
      assert.deepEqual(row, { status: 'queued', lease_owner: null, attempts: 1 });
      for (const w of won.slice(1)) await releaseLease(db, exportLease, w);
      await drainBulkWork(b.h.deps, { crawl: false });
    });

    test('a worker that lost its lease commits nothing: tweets and counts come from the new holder only', async () => {
      const db = b.h.deps.store.db;
      await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items: [{ socialUserId: b.sample.userIds[0] }] });
      await drainBulkWork(b.h.deps, { crawl: false });
      const tick = await crawlTick(b.h.deps);
      assert.ok(tick.started);
      const target = await db.selectFrom('crawl_targets').select('id').where('cycle_id', '=', tick.started).executeTakeFirstOrThrow();
      const zombie = (await claimById(db, targetLease, target.id, 'zombie', 1_000))!;
      const fresh = (await claimById(db, targetLease, target.id, 'fresh', 60_000, Date.now() + 2_000))!;
      assert.ok(zombie && fresh);
      const page = await b.source.getUserTweets(b.sample.userIds[0]!, { limit: 50 });
      await assert.rejects(b.h.deps.crawlPages.ingest(zombie, page.items, new Date().toISOString()), LeaseLostError);
      assert.equal(Number((await db.selectFrom('tweets').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n), 0);
      await performCrawlTarget(b.h.deps, fresh, new AbortController().signal);
      const cycle = await db.selectFrom('crawl_cycles').selectAll().where('id', '=', tick.started).executeTakeFirstOrThrow();
      assert.equal(cycle.status, 'completed');
      const n = Number((await db.selectFrom('tweets').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
      assert.equal(cycle.tweets_ingested, n);
      const t = await db.selectFrom('crawl_targets').select(['attempts', 'status']).where('id', '=', target.id).executeTakeFirstOrThrow();
      assert.deepEqual(t, { attempts: 2, status: 'completed' });
    });

    test("ending a target: a lost lease's end writes nothing; the holder's ends it, moves the account's position and counts it once", async () => {
      const db = b.h.deps.store.db;
      const userId = b.sample.userIds[2]!;
      await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items: [{ socialUserId: userId }] });
      await drainBulkWork(b.h.deps, { crawl: false });
      const tick = await crawlTick(b.h.deps);
      assert.ok(tick.started);
      const target = await db.selectFrom('crawl_targets').select('id').where('cycle_id', '=', tick.started).where('social_user_id', '=', userId).executeTakeFirstOrThrow();
      const zombie = (await claimById(db, targetLease, target.id, 'zombie', 1_000))!;
      const fresh = (await claimById(db, targetLease, target.id, 'fresh', 60_000, Date.now() + 2_000))!;
      assert.ok(zombie && fresh);
      const state = () =>
        Promise.all([
          db.selectFrom('crawl_targets').select(['status', 'lease_owner', 'completed_at', 'error']).where('id', '=', target.id).executeTakeFirstOrThrow(),
          db.selectFrom('crawl_accounts').select(['last_crawled_at', 'last_tweet_id', 'last_tweet_at']).where('social_user_id', '=', userId).executeTakeFirstOrThrow(),
          db.selectFrom('crawl_cycles').select(['accounts_completed', 'accounts_failed']).where('id', '=', tick.started!).executeTakeFirstOrThrow(),
        ]);
      const before = await state();
      const now = '2025-06-01T12:00:00.000Z';
      const newest = { id: '1790000000000000001', createdAt: '2025-06-01T11:00:00.000Z' };
      assert.equal(await finishTarget(db, zombie, { status: 'completed', error: null, now, userId, newest }), false);
      assert.deepEqual(await state(), before, "the zombie's end changed nothing");
      assert.equal(before[0].status, 'running');
      assert.equal(await finishTarget(db, fresh, { status: 'completed', error: null, now, userId, newest }), true);
      const [t, acc, cycle] = await state();
      assert.deepEqual(t, { status: 'completed', lease_owner: null, completed_at: now, error: null });
      assert.deepEqual(acc, { last_crawled_at: now, last_tweet_id: newest.id, last_tweet_at: newest.createdAt });
      assert.deepEqual(cycle, { accounts_completed: before[2].accounts_completed + 1, accounts_failed: before[2].accounts_failed });
      // Ended once: a second end (a retry after a lost answer) finds no lease and counts nothing.
      assert.equal(await finishTarget(db, fresh, { status: 'failed', error: 'late', now, userId }), false);
      assert.deepEqual(await state(), [t, acc, cycle]);
      await drainBulkWork(b.h.deps);
    });

    test('startBackground runs batches, the crawl and exports by itself, and stops cleanly', async () => {
      b.clock.advance(HOUR / 2); // not yet due: only the new account's own cycle runs
      const bg = await startBackground(b.h.deps, { roles: ['worker', 'scheduler'], log: silent });
      try {
        const res = await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items: [{ username: b.sample.usernames[1] }] });
        const batchId = json<{ data: { batchId: string } }>(res).data.batchId;
        await waitFor('the batch', async () => {
          const r = json<{ data: { status: string } }>(await call(b.h, a, 'GET', `${BASE}/watchlist/batch/${batchId}`));
          return r.data.status === 'completed';
        });
        const last = await waitFor('the first crawl of the new account', async () => {
          const s = json<{ data: { currentCycle: unknown; lastCompletedCycle: { accountsTargeted: number; startedAt: string } | null } }>(
            await call(b.h, a, 'GET', `${BASE}/crawl-status`),
          );
          return s.data.currentCycle === null && s.data.lastCompletedCycle?.startedAt === new Date(b.clock.ms).toISOString() && s.data.lastCompletedCycle;
        });
        assert.equal(last.accountsTargeted, 1);
        const gen = await call(b.h, a, 'POST', `${BASE}/exports/generate`, { startDate: new Date(T0 - 12 * HOUR).toISOString(), endDate: new Date(T0).toISOString() });
        const id = json<{ data: { id: string } }>(gen).data.id;
        await waitFor('the export', async () => {
          const r = await call(b.h, a, 'GET', `${BASE}/exports/${id}/download`);
          return r.statusCode === 200;
        });
      } finally {
        const t = Date.now();
        await bg.stop();
        assert.ok(Date.now() - t < 2_000, 'stop is prompt');
      }
    });
  });
}

describe('data-source calls of background jobs', () => {
  const policy = { retries: 2, baseDelayMs: 5, maxDelayMs: 10, maxRateLimitWaitMs: 1_000, maxRateLimitWaits: 2 };
  const never = new AbortController().signal;

  test('a rate limit is waited out until resetAt, then the call goes on', async () => {
    let calls = 0;
    const t0 = Date.now();
    const v = await callSource(
      async () => {
        if (++calls === 1) throw new SourceError('rate_limited', 'slow down', new Date(Date.now() + 150));
        return 'ok';
      },
      policy,
      never,
    );
    assert.equal(v, 'ok');
    assert.equal(calls, 2);
    assert.ok(Date.now() - t0 >= 150);
  });

  test('a reset too far away, or too many waits, fails the call', async () => {
    await assert.rejects(
      callSource(async () => Promise.reject(new SourceError('rate_limited', 'slow down', new Date(Date.now() + 60_000))), policy, never),
      (e: unknown) => e instanceof SourceError && e.kind === 'rate_limited',
    );
    let calls = 0;
    await assert.rejects(
      callSource(
        async () => {
          calls++;
          throw new SourceError('rate_limited', 'slow down', new Date(Date.now() + 5));
        },
        policy,
        never,
      ),
    );
    assert.equal(calls, 3);
  });

  test('transient failures are retried with backoff; permanent answers are not', async () => {
    let calls = 0;
    const v = await callSource(
      async () => {
        if (++calls < 3) throw new SourceError('unavailable', 'down');
        return calls;
      },
      policy,
      never,
    );
    assert.equal(v, 3);
    calls = 0;
    await assert.rejects(
      callSource(
        async () => {
          calls++;
          throw new SourceError('timeout', 'slow');
        },
        policy,
        never,
      ),
    );
    assert.equal(calls, 3, 'first attempt and two retries');
    calls = 0;
    await assert.rejects(
      callSource(
        async () => {
          calls++;
          throw new SourceError('not_found', 'gone');
        },
        policy,
        never,
      ),
    );
    assert.equal(calls, 1);
  });

  test('waits end at once when the job is stopped', async () => {
    const ac = new AbortController();
    const p = callSource(async () => Promise.reject(new SourceError('rate_limited', 'slow down', new Date(Date.now() + 900))), policy, ac.signal);
    const t0 = Date.now();
    setTimeout(() => ac.abort(new Error('stop')), 20);
    await assert.rejects(p, /stop/);
    assert.ok(Date.now() - t0 < 500);
  });
});
