// The crawl on the demo network with an injected clock: first crawl backfills 7 days, a later cycle
// ingests what appeared meanwhile and refreshes metrics; counts are checked against the store.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { sql, type KyselyPlugin } from 'kysely';
import { runCrawlTargetNow } from '../../src/crawl/crawl-job.js';
import { addTargets, cycleTotals, startCycle, targetLease } from '../../src/crawl/crawl-repo.js';
import { crawlStatus } from '../../src/crawl/crawl-status.js';
import { crawlPagesFor } from '../../src/crawl/page-ingest.js';
import { claimById, releaseLease } from '../../src/jobs/lease.js';
import { crawlTick } from '../../src/crawl/crawl-scheduler.js';
import { crawlSchedulerTask } from '../../src/crawl/crawl-log.js';
import { newCycleId } from '../../src/domain/record-ids.js';
import { drainBulkWork } from '../../src/wiring/drain-jobs.js';
import type { Tweet } from '../../src/domain/models.js';
import type { DemoSource } from '../../src/sources/demo/demo-source.js';
import { isActive } from '../../src/sources/demo/users.js';
import { SourceError, type DataSource, type TimelineQuery } from '../../src/sources/types.js';
import { CrawlStatusEnvelope } from '../../src/routes/bulk-export/schemas.js';
import { backends } from '../helpers/backends.js';
import { json, type TestAccount } from '../helpers/harness.js';
import type { CrawlStatusView } from '../../src/crawl/crawl-status.js';
import { BASE, bulkHarness, call, HOUR, T0, type BulkHarness } from './helpers.js';

const DAY = 24 * HOUR;

// The wire shape: the crawl-status envelope around the view the service computes.
interface Status {
  success: true;
  data: CrawlStatusView;
}

/** The demo source, with timelines of chosen accounts failing as if the upstream were down. */
class FlakySource implements DataSource {
  readonly name = 'demo';
  readonly failing = new Set<string>();
  constructor(private readonly inner: DemoSource) {}
  getUserByUsername = (u: string) => this.inner.getUserByUsername(u);
  getUserById = (id: string) => this.inner.getUserById(id);
  getTweet = (id: string) => this.inner.getTweet(id);
  getRetweeters = (id: string, p: { limit: number; after?: string }) => this.inner.getRetweeters(id, p);
  getCommunity = (id: string) => this.inner.getCommunity(id);
  async getUserTweets(id: string, q: TimelineQuery) {
    if (this.failing.has(id)) throw new SourceError('unavailable', 'simulated outage');
    return this.inner.getUserTweets(id, q);
  }
}

async function allTweets(source: DataSource, userId: string, startTime: Date): Promise<Tweet[]> {
  const out: Tweet[] = [];
  let after: string | undefined;
  do {
    const page = await source.getUserTweets(userId, { limit: 100, startTime, ...(after ? { after } : {}) });
    out.push(...page.items);
    after = page.next;
  } while (after);
  return out;
}

for (const backend of backends()) {
  describe(`crawl (${backend})`, () => {
    let b: BulkHarness;
    let a: TestAccount;
    let flaky: FlakySource;
    const status = async (): Promise<Status> => {
      const res = await call(b.h, a, 'GET', `${BASE}/crawl-status`);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['x-credits-charged'], '0');
      const body = json<Status>(res);
      assert.ok(Value.Check(CrawlStatusEnvelope, body), res.body);
      return body;
    };
    const db = () => b.h.deps.store.db;
    /** The first n active accounts of the demo network that the sample (the other tests' accounts) does not hold. */
    const activeOutsideSample = (n: number): string[] => {
      const out: string[] = [];
      for (let i = 0; out.length < n; i++) {
        const id = b.source.net.userIds.encode(i);
        if (isActive(b.source.net, i) && !b.sample.userIds.includes(id)) out.push(id);
      }
      return out;
    };
    /** The scheduler's crawl task, with the info lines it logs kept. */
    const loggedSchedulerTask = () => {
      const lines: Array<{ msg: string; obj: Record<string, unknown> }> = [];
      const log = { info: (obj: object, msg: string) => void lines.push({ msg, obj: obj as Record<string, unknown> }), warn: () => undefined, error: () => undefined };
      return { lines, task: crawlSchedulerTask(b.h.deps, log) };
    };
    const tweetCount = async () => Number((await db().selectFrom('tweets').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

    before(async () => {
      b = await bulkHarness(backend);
      flaky = new FlakySource(b.source);
      b.h.deps.source = flaky;
      a = await b.h.account();
    });
    after(() => b.h.close());

    test('before any cycle: nulls and the next hour boundary', async () => {
      const s = await status();
      assert.equal(s.success, true);
      assert.equal(s.data.currentCycle, null);
      assert.equal(s.data.lastCompletedCycle, null);
      assert.equal(s.data.schedule.intervalHours, 1);
      // T0 is on a boundary and nobody is on a watchlist: the next boundary.
      assert.equal(s.data.schedule.nextExpectedAt, new Date(T0 + HOUR).toISOString());
    });

    test('first crawl right after the batch: 7 days backfilled, counts equal the store', async () => {
      const ids = b.sample.userIds.slice(0, 3);
      const res = await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items: ids.map((socialUserId) => ({ socialUserId })) });
      assert.equal(res.statusCode, 202);
      await drainBulkWork(b.h.deps);
      const s = await status();
      assert.equal(s.data.currentCycle, null);
      const last = s.data.lastCompletedCycle!;
      assert.ok(last);
      assert.deepEqual([last.accountsTargeted, last.accountsCompleted, last.accountsFailed, last.tweetsUpdated], [3, 3, 0, 0]);
      assert.equal(last.startedAt, new Date(T0).toISOString());
      assert.equal(last.durationMinutes, 0);
      let expected = 0;
      for (const id of ids) expected += (await allTweets(b.source, id, new Date(T0 - 7 * DAY))).length;
      assert.ok(expected > 3 * 7 * 24, `active accounts post every hour (${expected})`);
      assert.equal(last.tweetsIngested, expected);
      assert.equal(await tweetCount(), expected);
      const oldest = await db().selectFrom('tweets').select('created_at').orderBy('created_at').limit(1).executeTakeFirstOrThrow();
      assert.ok(oldest.created_at >= new Date(T0 - 7 * DAY).toISOString());
      const authors = await db().selectFrom('tweets').select('author_id').distinct().execute();
      assert.deepEqual(new Set(authors.map((r) => r.author_id)), new Set(ids));
      const profiles = await db().selectFrom('profiles').select('id').where('id', 'in', ids).execute();
      assert.equal(profiles.length, 3, 'profiles of crawled accounts are stored');
      assert.equal(s.data.schedule.nextExpectedAt, new Date(T0 + HOUR).toISOString());
    });

    test('two hours later: new tweets ingested, changed metrics counted, a failing account counted as failed', async () => {
      const before = new Map((await db().selectFrom('tweets').select(['id', 'metrics']).execute()).map((r) => [r.id, r.metrics]));
      b.clock.advance(2 * HOUR);
      // Status: the cycle due at T0 + 1 h is overdue and about to start.
      assert.equal((await status()).data.schedule.nextExpectedAt, new Date(b.clock.ms).toISOString());
      const tick = await crawlTick(b.h.deps);
      assert.ok(tick.started);
      const targets = await db().selectFrom('crawl_targets').select(['id', 'social_user_id']).where('cycle_id', '=', tick.started).orderBy('id').execute();
      assert.equal(targets.length, 3);

      let s = await status();
      assert.deepEqual(s.data.currentCycle, {
        id: tick.started,
        status: 'running',
        startedAt: new Date(b.clock.ms).toISOString(),
        accountsTargeted: 3,
        accountsCompleted: 0,
        accountsFailed: 0,
        tweetsIngested: 0,
        percentComplete: 0,
      });
      assert.ok(await runCrawlTargetNow(b.h.deps, targets[0]!.id));
      s = await status();
      const cur = s.data.currentCycle!;
      assert.equal(cur.accountsCompleted, 1);
      assert.equal(cur.percentComplete, (1 / 3) * 100);
      assert.ok(cur.tweetsIngested > 0);
      assert.equal(s.data.lastCompletedCycle!.startedAt, new Date(T0).toISOString(), 'the last completed one is still the first');

      flaky.failing.add(targets[1]!.social_user_id);
      b.clock.advance(90_000);
      await drainBulkWork(b.h.deps);
      flaky.failing.clear();
      s = await status();
      assert.equal(s.data.currentCycle, null);
      const last = s.data.lastCompletedCycle!;
      assert.equal(last.id, tick.started);
      assert.deepEqual([last.accountsTargeted, last.accountsCompleted, last.accountsFailed], [3, 2, 1]);
      assert.equal(last.durationMinutes, 2, '90 s rounds to 2 minutes');

      const after = await db().selectFrom('tweets').select(['id', 'metrics', 'author_id']).execute();
      const fresh = after.filter((r) => !before.has(r.id));
      const changed = after.filter((r) => before.has(r.id) && before.get(r.id) !== r.metrics);
      assert.ok(fresh.length > 0 && changed.length > 0, `${fresh.length} new, ${changed.length} changed`);
      assert.equal(last.tweetsIngested, fresh.length);
      assert.equal(last.tweetsUpdated, changed.length);
      assert.ok(!fresh.some((r) => r.author_id === targets[1]!.social_user_id), 'the failed account ingested nothing');
      const failed = await db().selectFrom('crawl_targets').select(['status', 'error']).where('id', '=', targets[1]!.id).executeTakeFirstOrThrow();
      assert.equal(failed.status, 'failed');
      assert.match(failed.error!, /unavailable/);
      // The sums over all cycles equal the store.
      const cycles = await db().selectFrom('crawl_cycles').select(['tweets_ingested']).execute();
      assert.equal(cycles.reduce((n, c) => n + c.tweets_ingested, 0), await tweetCount());
      assert.equal(s.data.schedule.nextExpectedAt, new Date(T0 + 3 * HOUR).toISOString());
    });

    test('the failed account catches up at the next cycle; nothing is ingested twice', async () => {
      b.clock.advance(HOUR);
      const count0 = await tweetCount();
      await drainBulkWork(b.h.deps);
      const last = (await status()).data.lastCompletedCycle!;
      assert.deepEqual([last.accountsCompleted, last.accountsFailed], [3, 0]);
      assert.equal(last.tweetsIngested, (await tweetCount()) - count0);
      const ids = b.sample.userIds.slice(0, 3);
      let expected = 0;
      for (const id of ids) expected += (await allTweets(b.source, id, new Date(T0 - 7 * DAY))).length;
      assert.equal(await tweetCount(), expected, 'every tweet of the window, once');
    });

    test('an account added during a cycle joins it; accounts added between cycles get their own cycle at once', async () => {
      const extra = b.sample.userIds[3]!;
      b.clock.advance(HOUR);
      const tick = await crawlTick(b.h.deps);
      assert.ok(tick.started, 'scheduled cycle');
      await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items: [{ socialUserId: extra }] });
      await drainBulkWork(b.h.deps);
      const last = (await status()).data.lastCompletedCycle!;
      assert.equal(last.id, tick.started);
      assert.equal(last.accountsTargeted, 4);
      assert.equal(last.accountsCompleted, 4);
      const other = await b.h.account();
      const extra2 = b.sample.userIds[4]!;
      b.clock.advance(60_000);
      await call(b.h, other, 'POST', `${BASE}/watchlist/batch`, { items: [{ socialUserId: extra2 }] });
      await drainBulkWork(b.h.deps);
      const own = (await status()).data.lastCompletedCycle!;
      assert.notEqual(own.id, tick.started);
      assert.equal(own.accountsTargeted, 1, 'only the new account, without waiting for the schedule');
      assert.ok(own.tweetsIngested > 7 * 24);
      const cycle = await db().selectFrom('crawl_cycles').select('trigger').where('id', '=', own.id).executeTakeFirstOrThrow();
      assert.equal(cycle.trigger, 'new_accounts');
      // The schedule is unchanged by it: the next boundary after the scheduled cycle's.
      assert.equal((await status()).data.schedule.nextExpectedAt, new Date(T0 + 5 * HOUR).toISOString());
    });

    test("a running cycle's status is read from its row, not summed over its targets, and equals the sums at every step", async () => {
      b.clock.advance(HOUR);
      const tick = await crawlTick(b.h.deps);
      assert.ok(tick.started, 'scheduled cycle');
      const cycleId = tick.started;
      // Every statement the status runs, as Kysely's operation tree (raw SQL included).
      const seen: string[] = [];
      const recorder: KyselyPlugin = {
        transformQuery: (args) => (seen.push(JSON.stringify(args.node)), args.node),
        transformResult: async (args) => args.result,
      };
      const viewed = async () => {
        seen.length = 0;
        const deps = b.h.deps;
        const v = await crawlStatus({ ...deps, store: { ...deps.store, db: deps.store.db.withPlugin(recorder) } });
        assert.ok(seen.length > 0);
        assert.ok(!seen.some((q) => q.includes('crawl_targets')), 'the status reads no target');
        return v.currentCycle!;
      };
      const matchesSums = async (when: string) => {
        const v = await viewed();
        const t = await cycleTotals(db(), cycleId);
        assert.deepEqual(
          [v.accountsTargeted, v.accountsCompleted, v.accountsFailed, v.tweetsIngested],
          [t.targeted, t.completed, t.failed, t.tweetsIngested],
          when,
        );
        return v;
      };
      const targets = await db().selectFrom('crawl_targets').select(['id', 'social_user_id']).where('cycle_id', '=', cycleId).orderBy('id').execute();
      assert.ok(targets.length >= 3);
      assert.equal((await matchesSums('at the start')).accountsTargeted, targets.length);

      // A page stored by a worker that then stops gracefully: the target is pending again, its tweets counted.
      const claim = (await claimById(db(), targetLease, targets[0]!.id, 'w_test', 60_000, b.clock.ms))!;
      assert.ok(claim);
      const page = await b.source.getUserTweets(targets[0]!.social_user_id, { limit: 2 });
      const fresh = page.items.map((t, i) => ({ ...t, id: `99999999999999990${i}` }));
      const counts = await crawlPagesFor(b.h.deps.store).ingest(claim, fresh, new Date(b.clock.ms).toISOString());
      assert.equal(counts.inserted, 2);
      assert.equal((await matchesSums('after a page')).tweetsIngested, 2);
      await releaseLease(db(), targetLease, claim);
      assert.equal((await matchesSums('after the release')).tweetsIngested, 2);

      flaky.failing.add(targets[1]!.social_user_id);
      assert.ok(await runCrawlTargetNow(b.h.deps, targets[1]!.id));
      assert.ok(await runCrawlTargetNow(b.h.deps, targets[0]!.id));
      flaky.failing.clear();
      const v = await matchesSums('after one completed and one failed');
      assert.deepEqual([v.accountsCompleted, v.accountsFailed], [1, 1]);

      // Accounts added to the running cycle count once, however often they are added.
      const late = activeOutsideSample(3)[2]!;
      await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items: [{ socialUserId: late }] });
      await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items: [{ socialUserId: late }] });
      await drainBulkWork(b.h.deps);
      const last = (await status()).data.lastCompletedCycle!;
      assert.equal(last.id, cycleId);
      const t = await cycleTotals(db(), cycleId);
      assert.deepEqual([last.accountsTargeted, last.accountsCompleted, last.accountsFailed, last.tweetsIngested], [targets.length + 1, t.completed, t.failed, t.tweetsIngested]);
      const row = await db().selectFrom('crawl_cycles').selectAll().where('id', '=', cycleId).executeTakeFirstOrThrow();
      assert.deepEqual([row.accounts_targeted, row.tweets_updated], [t.targeted, t.tweetsUpdated]);
    });

    // Two schedulers can both find an account new; by the time the second adds it, a worker may be
    // finishing its target, holding the target's row and about to add to the cycle's counters.
    if (backend === 'postgres') {
      test('adding an account a worker is finishing does not wait for it while holding the cycle (no deadlock)', async () => {
        b.clock.advance(HOUR);
        const tick = await crawlTick(b.h.deps);
        assert.ok(tick.started, 'scheduled cycle');
        const cycleId = tick.started;
        const x = await db().selectFrom('crawl_targets').select(['id', 'social_user_id']).where('cycle_id', '=', cycleId).orderBy('id').limit(1).executeTakeFirstOrThrow();
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        let holding!: () => void;
        const held = new Promise<void>((r) => (holding = r));
        // The worker's transaction, as finishTarget orders it: the target's row, then the cycle's.
        const worker = db()
          .transaction()
          .execute(async (trx) => {
            await trx.updateTable('crawl_targets').set({ attempts: sql`attempts` }).where('id', '=', x.id).execute();
            holding();
            await gate;
            await trx.updateTable('crawl_cycles').set({ accounts_completed: sql`accounts_completed` }).where('id', '=', cycleId).execute();
          });
        await held;
        const adding = addTargets(db(), cycleId, [x.social_user_id], new Date(b.clock.ms).toISOString());
        // Time for the scheduler to take the cycle's row (if it then waited on the worker's target,
        // the worker's next statement would close a deadlock and Postgres would abort one of them).
        await Promise.race([adding.catch(() => undefined), new Promise((r) => setTimeout(r, 300))]);
        release();
        await worker;
        assert.equal(await adding, true);
        const row = await db().selectFrom('crawl_cycles').select('accounts_targeted').where('id', '=', cycleId).executeTakeFirstOrThrow();
        assert.equal(row.accounts_targeted, (await cycleTotals(db(), cycleId)).targeted, 'the account was not added twice');
        await drainBulkWork(b.h.deps);
      });
    }

    test('between cycles the scheduler reads the watchlist again only when a batch may have changed it', async () => {
      // A poll after every batch finished: it looks, finds nobody, and remembers when it looked.
      b.clock.advance(60_000);
      assert.deepEqual(await crawlTick(b.h.deps), {});
      // An entry written behind the batches' back (as a tool might): the watchlist did not change as
      // far as the scheduler can tell, so its poll does not read the whole watchlist for it.
      const [sneaked, added] = activeOutsideSample(2) as [string, string];
      await db().insertInto('watchlist_entries').values({ account_id: a.accountId, social_user_id: sneaked, username: 'sneaked', added_at: new Date(b.clock.ms).toISOString() }).execute();
      assert.deepEqual(await crawlTick(b.h.deps), {}, 'no look: no batch ran since the last one found nobody');
      // A batch (of another account, another user) finishes: the next poll looks, and finds both.
      const other = await b.h.account();
      b.clock.advance(60_000);
      await call(b.h, other, 'POST', `${BASE}/watchlist/batch`, { items: [{ socialUserId: added }] });
      await drainBulkWork(b.h.deps);
      const targeted = await db().selectFrom('crawl_targets').select('social_user_id').where('social_user_id', 'in', [sneaked, added]).execute();
      assert.deepEqual(new Set(targeted.map((t) => t.social_user_id)), new Set([sneaked, added]));
    });

    test("a cycle this scheduler did not start (sdg crawl start, another scheduler, before a restart) is logged once as running, then as finished", async () => {
      const { lines, task } = loggedSchedulerTask();
      b.clock.advance(60_000);
      const c = await startCycle(db(), { id: newCycleId(), trigger: 'operator', slot: null, now: new Date(b.clock.ms).toISOString(), who: 'all' });
      assert.ok(c, 'operator cycle started');
      await task.run(new AbortController().signal);
      await task.run(new AbortController().signal);
      const seen = lines.filter((l) => l.msg === 'crawl cycle running, started elsewhere');
      assert.equal(seen.length, 1, 'once');
      assert.deepEqual([seen[0]!.obj.id, seen[0]!.obj.trigger], [c.id, 'operator']);
      await drainBulkWork(b.h.deps);
      await task.run(new AbortController().signal);
      assert.equal(lines.find((l) => l.msg === 'crawl cycle finished')?.obj.id, c.id);
    });

    test('a cycle this scheduler did not start, first seen as it extends it with a newly watched account, is logged as running too', async () => {
      const { lines, task } = loggedSchedulerTask();
      b.clock.advance(60_000);
      const c = await startCycle(db(), { id: newCycleId(), trigger: 'operator', slot: null, now: new Date(b.clock.ms).toISOString(), who: 'all' });
      assert.ok(c, 'operator cycle started');
      // Watched after the cycle began, never crawled (the tests above use the first few): once its
      // batch is done, the scheduler's next poll adds it to the running cycle.
      const fresh = activeOutsideSample(10).at(-1)!;
      b.clock.advance(1_000);
      assert.equal((await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items: [{ socialUserId: fresh }] })).statusCode, 202);
      await drainBulkWork(b.h.deps, { crawl: false });
      await task.run(new AbortController().signal);
      assert.deepEqual(
        lines.map((l) => [l.msg, l.obj.id]),
        [
          ['crawl cycle running, started elsewhere', c.id],
          ['crawl cycle extended with newly watched accounts', c.id],
        ],
      );
      await drainBulkWork(b.h.deps);
      await task.run(new AbortController().signal);
      assert.equal(lines.at(-1)?.msg, 'crawl cycle finished');
      assert.equal(lines.at(-1)?.obj.id, c.id);
    });

    test('an account removed from every watchlist while its cycle runs is not crawled in it, and the cycle counts one account fewer', async () => {
      b.clock.advance(HOUR);
      const tick = await crawlTick(b.h.deps);
      assert.ok(tick.started, 'scheduled cycle');
      const gone = b.sample.userIds[1]!; // a's alone
      const kept = b.sample.userIds[0]!;
      const targeted = Number((await db().selectFrom('crawl_cycles').select('accounts_targeted').where('id', '=', tick.started).executeTakeFirstOrThrow()).accounts_targeted);
      const rm = await call(b.h, a, 'POST', `${BASE}/watchlist/batch-remove`, { socialUserIds: [gone] });
      assert.equal(rm.statusCode, 202, rm.body);
      const profileCalls: string[] = [];
      const getUserById = flaky.getUserById;
      flaky.getUserById = (id: string) => (profileCalls.push(id), getUserById(id));
      try {
        await drainBulkWork(b.h.deps);
      } finally {
        flaky.getUserById = getUserById;
      }
      const cycle = (await status()).data.lastCompletedCycle!;
      assert.equal(cycle.id, tick.started);
      assert.deepEqual([cycle.accountsTargeted, cycle.accountsCompleted + cycle.accountsFailed], [targeted - 1, targeted - 1]);
      assert.ok(!profileCalls.includes(gone), 'no call to the source for it');
      assert.ok(profileCalls.includes(kept));
      const targets = await db().selectFrom('crawl_targets').select('social_user_id').where('cycle_id', '=', tick.started).execute();
      assert.ok(!targets.some((t) => t.social_user_id === gone));
      assert.equal(targets.length, targeted - 1);
    });

    test('an account dropped from its first cycle and watched again is crawled at once, as any newly watched account', async () => {
      // Never watched nor crawled before (the tests above use the first few).
      const fresh = activeOutsideSample(20).at(-1)!;
      assert.equal((await db().selectFrom('crawl_accounts').select('social_user_id').where('social_user_id', '=', fresh).execute()).length, 0);
      const send = async (op: 'batch' | 'batch-remove', body: unknown) => {
        assert.equal((await call(b.h, a, 'POST', `${BASE}/watchlist/${op}`, body)).statusCode, 202);
        await drainBulkWork(b.h.deps, { crawl: false });
      };
      b.clock.advance(60_000);
      await send('batch', { items: [{ socialUserId: fresh }] });
      const first = await crawlTick(b.h.deps);
      assert.ok(first.started, `its first cycle: ${JSON.stringify(first)}`);
      await send('batch-remove', { socialUserIds: [fresh] });
      await drainBulkWork(b.h.deps);
      assert.equal((await db().selectFrom('crawl_targets').select('id').where('social_user_id', '=', fresh).execute()).length, 0, 'dropped');
      // Watched again: its own cycle starts at the next look, not at the next scheduled one.
      b.clock.advance(60_000);
      await send('batch', { items: [{ socialUserId: fresh }] });
      const again = await crawlTick(b.h.deps);
      assert.ok(again.started, 'a cycle for it at once');
      const t = await db().selectFrom('crawl_targets').select('social_user_id').where('cycle_id', '=', again.started).execute();
      assert.deepEqual(t.map((r) => r.social_user_id), [fresh]);
      await drainBulkWork(b.h.deps);
    });
  });
}
