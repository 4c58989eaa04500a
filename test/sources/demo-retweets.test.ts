import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { SocialProfile, type Tweet } from '../../src/domain/models.js';
import type { DemoSource } from '../../src/sources/demo/demo-source.js';
import type { RetweetEdge } from '../../src/sources/types.js';
import { parseUserId, statusOf } from '../../src/sources/demo/users.js';
import { clocked, DAY, findUsers, HOUR, NOW } from './demo-helpers.js';

const { source, clock } = clocked({ seed: 11 });

async function allRetweeters(src: DemoSource, id: string, pageSize: number): Promise<RetweetEdge[]> {
  const out: RetweetEdge[] = [];
  let after: string | undefined;
  for (let i = 0; i < 10_000; i++) {
    const page = await src.getRetweeters(id, { limit: pageSize, ...(after ? { after } : {}) });
    assert.ok(page.items.length <= pageSize);
    if (page.next) assert.equal(page.items.length, pageSize, 'a short page is the last one');
    out.push(...page.items);
    after = page.next;
    if (!after) return out;
  }
  assert.fail('retweeter walk did not end');
}

const actives = findUsers(source, (u) => u.active, 12, 3_000);
const tweets: Tweet[] = [];
for (const u of actives) tweets.push(...(await source.getUserTweets(u.id, { limit: 40 })).items);

test('metrics.retweets equals the number of retweeters listed, all distinct, valid and in order', async () => {
  let checked = 0;
  for (const t of tweets.filter((x) => x.metrics.retweets <= 300).slice(0, 120)) {
    const edges = await allRetweeters(source, t.id, 100);
    assert.equal(edges.length, t.metrics.retweets, `tweet ${t.id}`);
    const ids = edges.map((e) => e.user.id);
    assert.equal(new Set(ids).size, ids.length, 'distinct users');
    for (const e of edges) {
      assert.notEqual(e.user.id, t.authorId, 'never the author');
      assert.ok(Value.Check(SocialProfile, e.user));
      assert.equal(new Date(e.retweetedAt!).toISOString(), e.retweetedAt);
      assert.equal(statusOf(source.net, parseUserId(source.net, e.user.id)), 'public');
      assert.equal(e.user.protected, false);
      assert.ok(e.retweetedAt! > t.createdAt && Date.parse(e.retweetedAt!) <= NOW);
      assert.ok(e.user.createdAt <= t.createdAt, 'the retweeter existed when the tweet was posted');
    }
    for (let i = 1; i < edges.length; i++) assert.ok(edges[i - 1]!.retweetedAt! >= edges[i]!.retweetedAt!, 'most recent first');
    checked++;
  }
  assert.ok(checked > 50);
});

test('every tweet of an active user older than a few minutes has a retweeter', async () => {
  for (const t of tweets) {
    if (NOW - Date.parse(t.createdAt) < 3 * 60_000) continue;
    assert.ok(t.metrics.retweets >= 1, `tweet ${t.id} of ${t.createdAt}`);
    assert.equal((await source.getRetweeters(t.id, { limit: 1 })).items.length, 1);
  }
});

test('pages of 7 equal one page of 100', async () => {
  const t = tweets.find((x) => x.metrics.retweets > 30 && x.metrics.retweets <= 100);
  assert.ok(t, 'a tweet with 31..100 retweets');
  const big = await source.getRetweeters(t.id, { limit: 100 });
  assert.equal(big.next, undefined);
  const small = await allRetweeters(source, t.id, 7);
  assert.deepEqual(small, big.items);
});

test('keyset paging: retweets that arrive between pages cause no repeat and no skip', async () => {
  // A young tweet of a popular active author keeps collecting retweets.
  const popular = findUsers(source, (u) => u.active && u.followers > 20_000, 1)[0]!;
  clock.ms = NOW;
  const t = (await source.getUserTweets(popular.id, { limit: 5, startTime: new Date(NOW - 2 * HOUR) })).items.at(-1);
  assert.ok(t, 'a tweet of the last two hours');
  try {
    const atStart = await allRetweeters(source, t.id, 100);
    assert.ok(atStart.length >= 4, `${atStart.length} retweets at first`);
    const first = await source.getRetweeters(t.id, { limit: 3 });
    const walked = [...first.items];
    let after = first.next;
    clock.ms = NOW + 6 * HOUR;
    const later = await source.getTweet(t.id);
    assert.ok(later.metrics.retweets > atStart.length, 'more retweets arrived');
    while (after) {
      const page = await source.getRetweeters(t.id, { limit: 3, after });
      walked.push(...page.items);
      after = page.next;
    }
    assert.deepEqual(walked.map((e) => e.user.id), atStart.map((e) => e.user.id));
    const now = await allRetweeters(source, t.id, 100);
    assert.equal(now.length, later.metrics.retweets);
    assert.deepEqual(now.slice(now.length - atStart.length).map((e) => e.user.id), atStart.map((e) => e.user.id), 'new ones on top');
  } finally {
    clock.ms = NOW;
  }
});

test('retweets and the other metrics never decrease and stop growing after a week', async () => {
  const t = tweets[3]!;
  const created = Date.parse(t.createdAt);
  let prev: Tweet['metrics'] | undefined;
  const probe = clocked({ seed: 11 }, created);
  for (const dt of [0, 60_000, 10 * 60_000, HOUR, 5 * HOUR, DAY, 3 * DAY, 7 * DAY, 30 * DAY]) {
    probe.clock.ms = created + dt;
    const m = (await probe.source.getTweet(t.id)).metrics;
    if (prev) for (const k of Object.keys(m) as (keyof typeof m)[]) assert.ok(m[k] >= prev[k], `${k} at +${dt}`);
    const listed = await allRetweeters(probe.source, t.id, 100);
    if (m.retweets <= 1_000) assert.equal(listed.length, m.retweets);
    prev = m;
  }
  probe.clock.ms = created + 8 * DAY;
  const week = (await probe.source.getTweet(t.id)).metrics;
  probe.clock.ms = created + 400 * DAY;
  assert.deepEqual((await probe.source.getTweet(t.id)).metrics, week);
  assert.equal((await clocked({ seed: 11 }, created).source.getTweet(t.id)).metrics.retweets, 0, 'nothing at birth');
});
