import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Tweet } from '../../src/domain/models.js';
import type { DemoSource } from '../../src/sources/demo/demo-source.js';
import { MAX_SCAN_BUCKETS, walkSlots } from '../../src/sources/demo/schedule.js';
import { createdMsOf } from '../../src/sources/demo/users.js';
import { byNewest, clocked, DAY, findUsers, HOUR, NOW } from './demo-helpers.js';

const { source, clock } = clocked({ seed: 5 });
const active = findUsers(source, (u) => u.active, 3, 2_000);
const quiet = findUsers(source, (u) => u.status === 'public' && !u.active && u.rate < 0.06, 3, 2_000);
const users = [...active, ...quiet];

async function walk(src: DemoSource, userId: string, pageSize: number, pages: number): Promise<{ items: Tweet[]; nexts: (string | undefined)[] }> {
  const items: Tweet[] = [];
  const nexts: (string | undefined)[] = [];
  let after: string | undefined;
  for (let p = 0; p < pages; p++) {
    const page = await src.getUserTweets(userId, { limit: pageSize, ...(after ? { after } : {}) });
    assert.ok(page.items.length <= pageSize);
    items.push(...page.items);
    nexts.push(page.next);
    after = page.next;
    if (!after) break;
  }
  return { items, nexts };
}

test('timelines are newest first, by the user, not in the future, exactly `limit` long', async () => {
  for (const u of users) {
    const page = await source.getUserTweets(u.id, { limit: 100 });
    assert.equal(page.items.length, 100);
    assert.ok(page.next);
    for (const t of page.items) {
      assert.equal(t.authorId, u.id);
      assert.ok(Date.parse(t.createdAt) <= NOW);
    }
    for (let i = 1; i < page.items.length; i++) assert.ok(byNewest(page.items[i - 1]!, page.items[i]!), 'strictly newest first');
    // ids increase with createdAt
    for (let i = 1; i < page.items.length; i++) assert.ok(BigInt(page.items[i - 1]!.id) > BigInt(page.items[i]!.id));
  }
});

test('active users have a tweet in every hour bucket; quiet users about one or a few a day', async () => {
  for (const u of active) {
    const page = await source.getUserTweets(u.id, { limit: 100, startTime: new Date(NOW - 48 * HOUR) });
    const hours = new Set(page.items.map((t) => Math.floor(Date.parse(t.createdAt) / HOUR)));
    for (let h = Math.floor(NOW / HOUR) - 47; h < Math.floor(NOW / HOUR); h++) assert.ok(hours.has(h), `hour ${h}`);
  }
  for (const u of quiet) {
    const page = await source.getUserTweets(u.id, { limit: 100 });
    const spanDays = (NOW - Date.parse(page.items.at(-1)!.createdAt)) / DAY;
    assert.ok(spanDays > 20 && spanDays < 250, `100 tweets over ${spanDays.toFixed(0)} days`);
  }
});

test('paging: four pages of 25 equal one page of 100, with no repeats or gaps', async () => {
  for (const u of users) {
    const big = await source.getUserTweets(u.id, { limit: 100 });
    const { items, nexts } = await walk(source, u.id, 25, 4);
    assert.deepEqual(items.map((t) => t.id), big.items.map((t) => t.id));
    assert.equal(new Set(items.map((t) => t.id)).size, 100);
    assert.ok(nexts.every(Boolean));
    assert.equal(nexts[3], big.next, 'the positions agree');
    // the next page continues strictly older
    const more = await source.getUserTweets(u.id, { limit: 10, after: big.next! });
    assert.ok(Date.parse(more.items[0]!.createdAt) <= Date.parse(big.items.at(-1)!.createdAt));
    assert.ok(BigInt(more.items[0]!.id) < BigInt(big.items.at(-1)!.id));
  }
});

test("deep paging: a quiet user's whole history, page after page", async () => {
  const u = quiet[2]!;
  const { items, nexts } = await walk(source, u.id, 100, 200);
  assert.equal(nexts.at(-1), undefined, 'the walk reached the account creation');
  assert.ok(nexts.length > 5, `${nexts.length} pages`);
  assert.equal(new Set(items.map((t) => t.id)).size, items.length, 'no repeats');
  for (let i = 1; i < items.length; i++) assert.ok(byNewest(items[i - 1]!, items[i]!));
  assert.ok(Date.parse(items.at(-1)!.createdAt) >= createdMsOf(source.net, u.index));
  assert.ok(Date.parse(items.at(-1)!.createdAt) < createdMsOf(source.net, u.index) + 7 * DAY, 'down to the first days');
});

test('a walk ends at the account creation, with no next on the last page', async () => {
  const [u] = findUsers(source, (x) => x.active, 1, 150_000);
  const created = createdMsOf(source.net, u!.index);
  const young = clocked({ seed: 5 }, created + 3 * DAY).source;
  const { items, nexts } = await walk(young, u!.id, 40, 100);
  assert.equal(nexts.at(-1), undefined, 'the walk ended');
  assert.ok(items.length >= 72 && items.length <= 3 * 24 * 8, `${items.length} tweets in 3 days`);
  assert.equal(new Set(items.map((t) => t.id)).size, items.length);
  for (const t of items) assert.ok(Date.parse(t.createdAt) >= created);
  const all = await young.getUserTweets(u!.id, { limit: 100, startTime: new Date(created + 2 * DAY) });
  assert.ok(all.items.length < 100 && all.next === undefined, 'no next when everything fits');
  assert.equal(all.items.length, items.filter((t) => Date.parse(t.createdAt) >= created + 2 * DAY).length);
});

test('sinceId: only tweets with a greater id', async () => {
  const u = active[0]!;
  const big = await source.getUserTweets(u.id, { limit: 50 });
  const since = big.items[20]!.id;
  const page = await source.getUserTweets(u.id, { limit: 100, sinceId: since });
  assert.deepEqual(page.items.map((t) => t.id), big.items.slice(0, 20).map((t) => t.id));
  assert.equal(page.next, undefined);
  // paged with sinceId
  const first = await source.getUserTweets(u.id, { limit: 8, sinceId: since });
  assert.ok(first.next);
  const rest = await source.getUserTweets(u.id, { limit: 100, sinceId: since, after: first.next });
  assert.deepEqual([...first.items, ...rest.items].map((t) => t.id), big.items.slice(0, 20).map((t) => t.id));
  assert.equal((await source.getUserTweets(u.id, { limit: 5, sinceId: big.items[0]!.id })).items.length, 0);
  assert.equal((await source.getUserTweets(u.id, { limit: 5, sinceId: '99999999999999999999999' })).items.length, 0);
  assert.equal((await source.getUserTweets(u.id, { limit: 5, sinceId: '1' })).items.length, 5);
});

test('startTime is inclusive, endTime exclusive', async () => {
  const u = quiet[0]!;
  const big = await source.getUserTweets(u.id, { limit: 60 });
  const newer = big.items[10]!;
  const older = big.items[40]!;
  const page = await source.getUserTweets(u.id, {
    limit: 100,
    startTime: new Date(older.createdAt),
    endTime: new Date(newer.createdAt),
  });
  assert.deepEqual(page.items.map((t) => t.id), big.items.slice(11, 41).map((t) => t.id));
  assert.equal(page.next, undefined);
  for (const t of page.items) assert.ok(t.createdAt >= older.createdAt && t.createdAt < newer.createdAt);
  const ended = await source.getUserTweets(u.id, { limit: 5, endTime: new Date(Date.parse(newer.createdAt) + 1) });
  assert.equal(ended.items[0]!.id, newer.id);
  const empty = await source.getUserTweets(u.id, { limit: 5, startTime: new Date(NOW + HOUR) });
  assert.deepEqual(empty, { items: [] });
  const beforeEpoch = await source.getUserTweets(u.id, { limit: 5, endTime: new Date('2019-06-01T00:00:00Z') });
  assert.deepEqual(beforeEpoch, { items: [] });
});

test('a walk never scans more than the bucket budget, and then says where to go on', () => {
  const u = active[0]!;
  const nowRel = NOW - source.net.epochMs;
  const first = walkSlots(source.net, u, { upperTs: nowRel, lowerTs: 0, want: 1_000_000 });
  assert.ok(first.resumeBefore !== undefined, 'the budget ran out');
  assert.equal(first.resumeBefore, (Math.floor(nowRel / HOUR) - MAX_SCAN_BUCKETS + 1) * HOUR);
  assert.ok(first.slots.length >= MAX_SCAN_BUCKETS - 1, 'at least one per hour');
  assert.ok(first.slots.every((s) => s.ts >= first.resumeBefore!));
  // Resuming below that position continues exactly where the budget stopped.
  const second = walkSlots(source.net, u, { upperTs: nowRel, upperKey: { ts: first.resumeBefore!, low: 0 }, lowerTs: 0, want: 3 });
  const joined = walkSlots(source.net, u, { upperTs: nowRel - MAX_SCAN_BUCKETS * HOUR + 2 * HOUR, lowerTs: 0, want: 1_000_000 });
  const oldest = first.slots.at(-1)!;
  const i = joined.slots.findIndex((s) => s.ts === oldest.ts && s.seq === oldest.seq);
  assert.ok(i >= 0);
  assert.deepEqual(second.slots, joined.slots.slice(i + 1, i + 4));
});

test('aliveness: two hours later new tweets are on top and old metrics have grown', async () => {
  const u = active[1]!;
  clock.ms = NOW;
  const before = await source.getUserTweets(u.id, { limit: 100 });
  const watched = before.items.filter((t) => NOW - Date.parse(t.createdAt) > HOUR && NOW - Date.parse(t.createdAt) < 30 * HOUR);
  assert.ok(watched.length > 10);
  clock.ms = NOW + 2 * HOUR;
  try {
    const after = await source.getUserTweets(u.id, { limit: 100 });
    const fresh = after.items.filter((t) => Date.parse(t.createdAt) > NOW);
    assert.ok(fresh.length >= 1, 'new tweets appeared');
    assert.deepEqual(after.items.slice(0, fresh.length), fresh, 'new tweets are on top');
    assert.equal(after.items[fresh.length]!.id, before.items[0]!.id, 'then the old top');
    let grew = 0;
    for (const old of watched) {
      const now = await source.getTweet(old.id);
      for (const k of ['retweets', 'replies', 'likes', 'quotes', 'views', 'bookmarks'] as const) {
        assert.ok(now.metrics[k] >= old.metrics[k], `${k} never decreases`);
        if (now.metrics[k] > old.metrics[k]) grew++;
      }
      assert.deepEqual({ ...now, metrics: old.metrics }, old, 'only metrics change');
    }
    assert.ok(grew > watched.length, `${grew} metrics grew`);
  } finally {
    clock.ms = NOW;
  }
});

test('limits are clamped to 1..100', async () => {
  const u = active[2]!;
  assert.equal((await source.getUserTweets(u.id, { limit: 1000 })).items.length, 100);
  assert.equal((await source.getUserTweets(u.id, { limit: 0 })).items.length, 1);
});
