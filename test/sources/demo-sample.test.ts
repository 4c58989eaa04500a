import assert from 'node:assert/strict';
import { test } from 'node:test';
import { demoSample } from '../../src/sources/demo/sample.js';
import { clocked, DAY, NOW, rejectsWith } from './demo-helpers.js';

const { source } = clocked({ seed: 3 });
const sample = demoSample(source, new Date(NOW));

test('demoSample gives at least five of each, three protected accounts', () => {
  for (const k of ['usernames', 'userIds', 'tweetIds', 'communityIds'] as const) {
    assert.ok(sample[k].length >= 5, k);
    assert.equal(new Set(sample[k]).size, sample[k].length, `${k} distinct`);
  }
  assert.equal(sample.protectedUserIds.length, 3);
});

test('demoSample is deterministic for a seed and differs between seeds', () => {
  assert.deepEqual(demoSample(clocked({ seed: 3 }).source, new Date(NOW)), sample);
  const later = demoSample(source, new Date(NOW + 3 * DAY));
  assert.deepEqual({ ...later, tweetIds: [] }, { ...sample, tweetIds: [] }, 'only the tweets follow the clock');
  const other = demoSample(clocked({ seed: 4 }).source, new Date(NOW));
  assert.notDeepEqual(other.usernames, sample.usernames);
  assert.notDeepEqual(other.communityIds, sample.communityIds);
});

test('sample accounts are public, active, with 25+ tweets and one in each of the last seven days', async () => {
  for (const [i, username] of sample.usernames.entries()) {
    const p = await source.getUserByUsername(username);
    assert.equal(p.id, sample.userIds[i]);
    assert.equal(p.protected, false);
    const page = await source.getUserTweets(p.id, { limit: 100 });
    assert.ok(page.items.length >= 25);
    for (let d = 0; d < 7; d++) {
      const window = await source.getUserTweets(p.id, {
        limit: 5,
        startTime: new Date(NOW - (d + 1) * DAY),
        endTime: new Date(NOW - d * DAY),
      });
      assert.ok(window.items.length >= 1, `${username}: a tweet ${d} days back`);
    }
  }
});

test('sample tweets each have a retweeter; sample communities and protected accounts exist', async () => {
  for (const id of sample.tweetIds) {
    const t = await source.getTweet(id);
    assert.ok(t.metrics.retweets >= 1);
    assert.ok((await source.getRetweeters(id, { limit: 5 })).items.length >= 1);
    assert.ok(sample.userIds.includes(t.authorId));
  }
  for (const id of sample.communityIds) assert.equal((await source.getCommunity(id)).id, id);
  for (const id of sample.protectedUserIds) {
    assert.equal((await source.getUserById(id)).protected, true);
    await rejectsWith(source.getUserTweets(id, { limit: 5 }), 'protected');
  }
});

test('demoSample works for the default network at the wall clock', async () => {
  const live = clocked({}, Date.now()).source;
  const s = demoSample(live, new Date());
  assert.ok(s.tweetIds.length >= 5);
  for (const id of s.tweetIds) assert.ok((await live.getRetweeters(id, { limit: 1 })).items.length === 1);
});
