// Watchlist batches: every item outcome, the plan's limit (also under concurrent batches), removal,
// listing, and separate watchlists per account.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { performBatch, runBatchNow } from '../../src/watchlist/batch-job.js';
import { batchLease } from '../../src/watchlist/batch-repo.js';
import { claimNext, releaseLease, runLeasedNow } from '../../src/jobs/lease.js';
import { drainBulkWork } from '../../src/wiring/drain-jobs.js';
import { defaultPlans } from '../../src/config/plans.js';
import type { DemoSource } from '../../src/sources/demo/demo-source.js';
import { backends } from '../helpers/backends.js';
import { json, type TestAccount } from '../helpers/harness.js';
import { BASE, bulkHarness, call, type BulkHarness } from './helpers.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';

interface Item {
  socialUserId: string | null;
  username: string | null;
  status: string;
  error: string | null;
}
interface Batch {
  batchId: string;
  operation: string;
  status: string;
  total: number;
  processed: number;
  succeeded: number;
  failed: number;
  createdAt: string;
  completedAt: string | null;
  items: Item[];
}

/** The first n public accounts of the network, by id. */
async function publicUsers(source: DemoSource, n: number, skip = 0): Promise<Array<{ id: string; username: string }>> {
  const out: Array<{ id: string; username: string }> = [];
  for (let i = 0; out.length < n + skip && i < 500; i++) {
    try {
      const p = await source.getUserById(source.net.userIds.encode(i));
      if (!p.protected) out.push({ id: p.id, username: p.username });
    } catch {
      /* suspended */
    }
  }
  return out.slice(skip);
}

for (const backend of backends()) {
  describe(`watchlist batches (${backend})`, () => {
    let b: BulkHarness;
    let a: TestAccount;
    const plansFile = join(mkdtempSync(join(tmpdir(), 'sdg-plans-')), 'plans.json');
    writeFileSync(plansFile, JSON.stringify([...defaultPlans, { ...defaultPlans[0]!, id: 'tiny', name: 'Tiny', watchlistLimit: 3 }]));

    const batch = async (acct: TestAccount, op: 'batch' | 'batch-remove', body: unknown): Promise<Batch> => {
      const res = await call(b.h, acct, 'POST', `${BASE}/watchlist/${op}`, body);
      assert.equal(res.statusCode, 202, res.body);
      return json<{ data: Batch }>(res).data;
    };
    const getBatch = async (acct: TestAccount, id: string): Promise<Batch> => {
      const res = await call(b.h, acct, 'GET', `${BASE}/watchlist/batch/${id}`);
      assert.equal(res.statusCode, 200, res.body);
      return json<{ data: Batch }>(res).data;
    };
    const watchlist = async (acct: TestAccount): Promise<Array<{ socialUserId: string; username: string; addedAt: string }>> => {
      const out: Array<{ socialUserId: string; username: string; addedAt: string }> = [];
      let cursor: string | null = null;
      do {
        const res = await call(b.h, acct, 'GET', `${BASE}/watchlist?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.equal(res.statusCode, 200, res.body);
        const page = json<{ items: typeof out; nextCursor: string | null }>(res);
        out.push(...page.items);
        cursor = page.nextCursor;
      } while (cursor);
      return out;
    };

    before(async () => {
      b = await bulkHarness(backend, { PLANS_FILE: plansFile });
      a = await b.h.account();
    });
    after(() => b.h.close());

    test('add: resolved usernames, checked ids, duplicates, unknowns, mismatches and protected accounts', async () => {
      const s = b.sample;
      const u0 = await b.source.getUserByUsername(s.usernames[0]!);
      const created = await batch(a, 'batch', {
        items: [
          { username: s.usernames[0]!.toUpperCase() },
          { socialUserId: s.userIds[1] },
          { socialUserId: s.userIds[2], username: s.usernames[2] },
          { username: s.usernames[0] },
          { username: 'nosuchuser_1999999' },
          { socialUserId: '1' },
          { socialUserId: s.userIds[3], username: s.usernames[4] },
          { socialUserId: s.protectedUserIds[0] },
        ],
      });
      assert.equal(created.status, 'queued');
      assert.ok(created.items.every((i) => i.status === 'pending' && i.error === null));
      assert.equal(created.items[0]!.username, s.usernames[0], 'usernames are kept lowercase');

      await drainBulkWork(b.h.deps, { crawl: false });
      const done = await getBatch(a, created.batchId);
      assert.equal(done.status, 'completed');
      assert.ok(done.completedAt);
      assert.deepEqual(
        done.items.map((i) => i.status),
        ['added', 'added', 'added', 'already_present', 'not_found', 'not_found', 'failed', 'failed'],
      );
      assert.deepEqual(done.items[0], { socialUserId: u0.id, username: u0.username, status: 'added', error: null });
      assert.equal(done.items[1]!.username, s.usernames[1], 'an id resolves to its username');
      assert.equal(done.items[4]!.socialUserId, null);
      assert.match(done.items[6]!.error!, /not @/);
      assert.match(done.items[7]!.error!, /protected/);
      assert.deepEqual([done.total, done.processed, done.succeeded, done.failed], [8, 8, 4, 4]);

      const list = await watchlist(a);
      assert.deepEqual(new Set(list.map((e) => e.socialUserId)), new Set(s.userIds.slice(0, 3)));
      for (const e of list) assert.equal(e.addedAt, new Date(b.clock.ms).toISOString());
      // Another account's watchlist is its own.
      const other = await b.h.account();
      assert.deepEqual(await watchlist(other), []);
      const again = await batch(other, 'batch', { items: [{ socialUserId: s.userIds[0] }] });
      await drainBulkWork(b.h.deps, { crawl: false });
      assert.equal((await getBatch(other, again.batchId)).items[0]!.status, 'added', 'present on A’s list, new on B’s');
    });

    test('remove: removed or not_present; the listing follows', async () => {
      const s = b.sample;
      const r = await batch(a, 'batch-remove', { socialUserIds: [s.userIds[1], '999999', s.userIds[1]] });
      assert.deepEqual(r.items.map((i) => [i.socialUserId, i.status]), [[s.userIds[1], 'pending'], ['999999', 'pending'], [s.userIds[1], 'pending']]);
      await drainBulkWork(b.h.deps, { crawl: false });
      const done = await getBatch(a, r.batchId);
      assert.equal(done.status, 'completed');
      assert.deepEqual(done.items.map((i) => i.status), ['removed', 'not_present', 'not_present']);
      // The removed account's username is given, as an add's item gives it.
      assert.deepEqual(done.items.map((i) => i.username?.toLowerCase() ?? null), [s.usernames[1]!.toLowerCase(), null, null]);
      assert.deepEqual([done.processed, done.succeeded, done.failed], [3, 3, 0]);
      const list = await watchlist(a);
      assert.deepEqual(new Set(list.map((e) => e.socialUserId)), new Set([s.userIds[0], s.userIds[2]]));
    });

    test("the plan's limit: later items get limit_exceeded; room comes back after a removal", async () => {
      const t = await b.h.account({ planId: 'tiny' });
      const users = await publicUsers(b.source, 5);
      const r = await batch(t, 'batch', { items: users.map((u) => ({ socialUserId: u.id })) });
      await drainBulkWork(b.h.deps, { crawl: false });
      const done = await getBatch(t, r.batchId);
      assert.deepEqual(done.items.map((i) => i.status), ['added', 'added', 'added', 'limit_exceeded', 'limit_exceeded']);
      assert.match(done.items[3]!.error!, /3 accounts/);
      assert.deepEqual([done.succeeded, done.failed], [3, 2]);
      const rm = await batch(t, 'batch-remove', { socialUserIds: [users[0]!.id] });
      await drainBulkWork(b.h.deps, { crawl: false });
      assert.equal((await getBatch(t, rm.batchId)).items[0]!.status, 'removed');
      const again = await batch(t, 'batch', { items: [{ socialUserId: users[4]!.id }, { socialUserId: users[3]!.id }] });
      await drainBulkWork(b.h.deps, { crawl: false });
      assert.deepEqual((await getBatch(t, again.batchId)).items.map((i) => i.status), ['added', 'limit_exceeded']);
      assert.equal((await watchlist(t)).length, 3);
    });

    test('a full watchlist answers already_present for the accounts it holds (by id, or by username in any case), limit_exceeded for the rest', async () => {
      const t = await b.h.account({ planId: 'tiny' });
      const users = await publicUsers(b.source, 4, 21);
      const fill = await batch(t, 'batch', { items: users.slice(0, 3).map((u) => ({ socialUserId: u.id })) });
      await drainBulkWork(b.h.deps, { crawl: false });
      assert.deepEqual((await getBatch(t, fill.batchId)).items.map((i) => i.status), ['added', 'added', 'added']);
      // A client re-sending its whole list to keep it in sync, plus one account more.
      const resend = await batch(t, 'batch', {
        items: [{ socialUserId: users[0]!.id }, { username: users[1]!.username.toUpperCase() }, { socialUserId: users[3]!.id }, { socialUserId: users[2]!.id, username: users[2]!.username }],
      });
      await drainBulkWork(b.h.deps, { crawl: false });
      const done = await getBatch(t, resend.batchId);
      assert.deepEqual(done.items.map((i) => i.status), ['already_present', 'already_present', 'limit_exceeded', 'already_present']);
      assert.deepEqual([done.succeeded, done.failed], [3, 1]);
      assert.equal((await watchlist(t)).length, 3);
    });

    test("one account's batches run one at a time, in the order sent: an add then a remove of one account leaves it removed", async () => {
      const t = await b.h.account();
      const [u] = await publicUsers(b.source, 1, 31);
      const add = await batch(t, 'batch', { items: [{ socialUserId: u!.id }] });
      const rm = await batch(t, 'batch-remove', { socialUserIds: [u!.id] });
      // Two workers: the first takes the add; the remove (which needs no lookup, so it would finish
      // first) is not claimable while the add is open, by either way of claiming.
      const first = await claimNext(b.h.deps.store.db, batchLease, 'worker-1', 60_000);
      assert.equal(first?.id, add.batchId);
      assert.equal(await claimNext(b.h.deps.store.db, batchLease, 'worker-2', 60_000), undefined);
      assert.equal(await runBatchNow(b.h.deps, rm.batchId, 'worker-2'), false);
      await releaseLease(b.h.deps.store.db, batchLease, first!);
      await drainBulkWork(b.h.deps, { crawl: false });
      assert.equal((await getBatch(t, add.batchId)).items[0]!.status, 'added');
      assert.equal((await getBatch(t, rm.batchId)).items[0]!.status, 'removed');
      assert.ok(!(await watchlist(t)).some((e) => e.socialUserId === u!.id));
    });

    test("one account's many batches leave the other workers to other accounts", async () => {
      const busy = await b.h.account();
      const other = await b.h.account();
      const users = await publicUsers(b.source, 4, 41);
      for (const u of users.slice(0, 3)) await batch(busy, 'batch', { items: [{ socialUserId: u.id }] });
      const late = await batch(other, 'batch', { items: [{ socialUserId: users[3]!.id }] });
      const first = await claimNext(b.h.deps.store.db, batchLease, 'worker-1', 60_000);
      const second = await claimNext(b.h.deps.store.db, batchLease, 'worker-2', 60_000);
      // The second worker takes the other account's batch, sent after all three of the busy one's.
      assert.equal(second?.id, late.batchId);
      for (const c of [first!, second!]) await releaseLease(b.h.deps.store.db, batchLease, c);
      await drainBulkWork(b.h.deps, { crawl: false });
    });

    test('the limit holds when two workers process two batches of one account at once', async () => {
      const t = await b.h.account({ planId: 'tiny' });
      const users = await publicUsers(b.source, 6, 5);
      const b1 = await batch(t, 'batch', { items: users.slice(0, 3).map((u) => ({ socialUserId: u.id })) });
      const b2 = await batch(t, 'batch', { items: users.slice(3).map((u) => ({ socialUserId: u.id })) });
      // Batches of one account no longer run at once (above); claimed here without that rule (as a
      // process of an earlier release would), to keep the limit's own guard under test.
      const unordered = { ...batchLease, serialBy: undefined };
      const run = (id: string, owner: string) => runLeasedNow(b.h.deps.store.db, unordered, id, owner, 60_000, (c, signal) => performBatch(b.h.deps, c, signal));
      await Promise.all([run(b1.batchId, 'worker-1'), run(b2.batchId, 'worker-2')]);
      const items = [...(await getBatch(t, b1.batchId)).items, ...(await getBatch(t, b2.batchId)).items];
      assert.equal(items.filter((i) => i.status === 'added').length, 3);
      assert.equal(items.filter((i) => i.status === 'limit_exceeded').length, 3);
      assert.equal((await watchlist(t)).length, 3);
      const count = await b.h.deps.store.db.selectFrom('watchlist_counts').select('entries').where('account_id', '=', t.accountId).executeTakeFirstOrThrow();
      assert.equal(count.entries, 3);
    });

    test('listing: newest first, pages never repeat', async () => {
      const t = await b.h.account();
      const users = await publicUsers(b.source, 5, 11);
      for (const u of users) {
        await batch(t, 'batch', { items: [{ socialUserId: u.id }] });
        await drainBulkWork(b.h.deps, { crawl: false });
        b.clock.advance(1_000);
      }
      const list = await watchlist(t);
      assert.deepEqual(list.map((e) => e.socialUserId), users.map((u) => u.id).reverse());
    });
  });
}
