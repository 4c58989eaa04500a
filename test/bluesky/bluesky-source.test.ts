import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Tweet } from '../../src/domain/models.js';
import { compareIds } from '../../src/sources/bluesky/ids.js';
import { quickRetryPolicy, ResilientSource } from '../../src/sources/resilience.js';
import { SourceError, type SourceErrorKind } from '../../src/sources/types.js';
import { buildWorld, T0, type World } from './world.js';

const H = 3_600_000;

async function rejectsWith(p: Promise<unknown>, kind: SourceErrorKind): Promise<SourceError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SourceError, String(err));
    assert.equal(err.kind, kind, err.message);
    return err;
  }
  assert.fail(`expected a SourceError ${kind}`);
}

async function aliceId(w: World): Promise<string> {
  return (await w.source.getUserByUsername('alice.test')).id;
}

/** Every tweet of a timeline walk with `limit` per page. */
async function walk(w: World, userId: string, limit: number, between?: () => void): Promise<Tweet[]> {
  const out: Tweet[] = [];
  let after: string | undefined;
  for (let i = 0; i < 50; i++) {
    const page = await w.source.getUserTweets(userId, { limit, ...(after ? { after } : {}) });
    assert.ok(page.items.length <= limit);
    out.push(...page.items);
    if (page.next === undefined) return out;
    after = page.next;
    between?.();
  }
  assert.fail('the walk did not end');
}

function assertNewestFirst(tweets: Tweet[]): void {
  for (let i = 1; i < tweets.length; i++) {
    const [p, c] = [tweets[i - 1]!, tweets[i]!];
    assert.ok(p.createdAt > c.createdAt || (p.createdAt === c.createdAt && compareIds(p.id, c.id) > 0), `${p.text} before ${c.text}`);
  }
}

describe('Bluesky source: timelines', () => {
  test("the author's own posts and replies, newest first, without reposts", async () => {
    const w = buildWorld();
    const uid = await aliceId(w);
    const page = await w.source.getUserTweets(uid, { limit: 100 });
    assert.equal(page.next, undefined);
    assert.deepEqual(page.items.map((t) => t.text), [
      'from the future',
      'again, with a picture',
      'hi bob',
      'look at this',
      'a clip',
      'two pictures',
      w.posts.link.record.text,
      'an old one',
    ]);
    assertNewestFirst(page.items);
    assert.ok(page.items.every((t) => t.authorId === uid && t.retweetedTweetId === null));
  });

  for (const limit of [1, 2, 3, 5]) {
    test(`paging by ${limit}: the same tweets, no repeats, no gaps`, async () => {
      const w = buildWorld();
      const uid = await aliceId(w);
      const all = (await w.source.getUserTweets(uid, { limit: 100 })).items.map((t) => t.id);
      const walked = (await walk(w, uid, limit)).map((t) => t.id);
      assert.deepEqual(walked, all);
    });
  }

  test('new posts arriving between pages neither repeat nor shift the walk', async () => {
    const w = buildWorld();
    const uid = await aliceId(w);
    const before = (await w.source.getUserTweets(uid, { limit: 100 })).items.map((t) => t.id);
    let n = 0;
    const walked = await walk(w, uid, 2, () => w.appView.addPost(w.actors.alice, `new ${n++}`, { at: T0 + (10 + n) * H }));
    assert.deepEqual(walked.map((t) => t.id), before);
    assert.ok(n >= 3);
    const now = (await w.source.getUserTweets(uid, { limit: 1 })).items[0]!;
    assert.match(now.text, /^new /);
  });

  test('startTime, endTime and sinceId bound the walk', async () => {
    const w = buildWorld();
    const uid = await aliceId(w);
    const all = (await w.source.getUserTweets(uid, { limit: 100 })).items;
    const byStart = await w.source.getUserTweets(uid, { limit: 100, startTime: new Date(T0 + 2 * H) });
    assert.deepEqual(byStart.items.map((t) => t.text), ['from the future', 'again, with a picture', 'hi bob', 'look at this', 'a clip']);
    assert.equal(byStart.next, undefined);
    const calls = w.appView.calls.length;
    const small = await w.source.getUserTweets(uid, { limit: 2, startTime: new Date(T0 + 4 * H) });
    assert.deepEqual(small.items.map((t) => t.text), ['from the future', 'again, with a picture']);
    assert.ok(small.next);
    const rest = await w.source.getUserTweets(uid, { limit: 2, startTime: new Date(T0 + 4 * H), after: small.next });
    assert.deepEqual(rest.items.map((t) => t.text), ['hi bob']);
    assert.equal(rest.next, undefined, 'past the lower bound: the end');
    assert.ok(w.appView.calls.length - calls <= 3);
    const exact = await w.source.getUserTweets(uid, { limit: 3, startTime: new Date(T0 + 4 * H) });
    assert.equal(exact.items.length, 3);
    assert.equal(exact.next, undefined, 'the last tweet within the bound ends the list: no empty page after it');

    const byEnd = await w.source.getUserTweets(uid, { limit: 100, endTime: new Date(T0 + 3 * H) });
    assert.deepEqual(byEnd.items.map((t) => t.text), ['a clip', 'two pictures', w.posts.link.record.text, 'an old one']);
    const window = await w.source.getUserTweets(uid, { limit: 100, startTime: new Date(T0), endTime: new Date(T0 + 2 * H) });
    assert.deepEqual(window.items.map((t) => t.text), ['two pictures', w.posts.link.record.text]);

    const since = all.find((t) => t.text === 'a clip')!;
    const bySince = await w.source.getUserTweets(uid, { limit: 100, sinceId: since.id });
    assert.deepEqual(bySince.items.map((t) => t.text), ['from the future', 'again, with a picture', 'hi bob', 'look at this']);
    assert.ok(bySince.items.every((t) => compareIds(t.id, since.id) > 0));
  });

  test('a protected account (self-labelled !no-unauthenticated): its timeline is protected', async () => {
    const w = buildWorld();
    const carol = await w.source.getUserByUsername('carol.test');
    assert.equal(carol.protected, true);
    await rejectsWith(w.source.getUserTweets(carol.id, { limit: 10 }), 'protected');
    // Its posts too, by id (the AppView serves them, with the label on the author).
    const postId = (await w.idMap.postIds([{ uri: w.posts.carolPost.uri, atMs: T0 }])).get(w.posts.carolPost.uri)!;
    await rejectsWith(w.source.getTweet(postId), 'protected');
    await rejectsWith(w.source.getRetweeters(postId, { limit: 5 }), 'protected');
    // An account whose first page has none of its own posts: its profile tells.
    const gina = w.appView.addActor('gina.test', { labels: ['!no-unauthenticated'] });
    w.appView.repost(w.posts.link, gina, T0 + 9 * H);
    const ginaId = (await w.source.getUserByUsername('gina.test')).id;
    await rejectsWith(w.source.getUserTweets(ginaId, { limit: 10 }), 'protected');
  });

  test('an account with nothing to show is just empty', async () => {
    const w = buildWorld();
    const frank = await w.source.getUserByUsername('frank.test');
    assert.deepEqual(await w.source.getUserTweets(frank.id, { limit: 10 }), { items: [] });
  });

  test('taken down → suspended, deactivated → not_found, for profiles and timelines', async () => {
    const w = buildWorld();
    await rejectsWith(w.source.getUserByUsername('dave.test'), 'suspended');
    await rejectsWith(w.source.getUserByUsername('erin.test'), 'not_found');
    const ids = await w.idMap.userIds([w.actors.dave.did, w.actors.erin.did]);
    await rejectsWith(w.source.getUserTweets(ids.get(w.actors.dave.did)!, { limit: 5 }), 'suspended');
    await rejectsWith(w.source.getUserTweets(ids.get(w.actors.erin.did)!, { limit: 5 }), 'not_found');
    await rejectsWith(w.source.getUserById(ids.get(w.actors.dave.did)!), 'suspended');
  });

  test('a malformed position is a bad response', async () => {
    const w = buildWorld();
    const uid = await aliceId(w);
    await rejectsWith(w.source.getUserTweets(uid, { limit: 5, after: 'garbage' }), 'bad_response');
  });
});

describe('Bluesky source: retweeters', () => {
  test('most recent repost first, full profiles, accounts taken down left out, paged', async () => {
    const w = buildWorld();
    const uid = await aliceId(w);
    const link = (await w.source.getUserTweets(uid, { limit: 100 })).items.find((t) => t.text === w.posts.link.record.text)!;
    const page = await w.source.getRetweeters(link.id, { limit: 10 });
    assert.deepEqual(page.items.map((e) => e.user.username), ['frank.test', 'bob.test']);
    assert.ok(page.items.every((e) => e.retweetedAt === null));
    assert.equal(page.items[1]!.user.metrics.followers, 10, 'counts come from the full profile');
    assert.ok(w.appView.calls.includes('app.bsky.actor.getProfiles'));
    const first = await w.source.getRetweeters(link.id, { limit: 1 });
    assert.deepEqual(first.items.map((e) => e.user.username), ['frank.test']);
    assert.ok(first.next);
    const second = await w.source.getRetweeters(link.id, { limit: 1, after: first.next });
    assert.deepEqual(second.items.map((e) => e.user.username), ['bob.test']);
    const none = await w.source.getRetweeters(link.id, { limit: 1, ...(second.next ? { after: second.next } : {}) });
    if (second.next) assert.deepEqual(none, { items: [] });
  });

  test('a post nobody reposted: empty; a post that is gone: not_found', async () => {
    const w = buildWorld();
    const uid = await aliceId(w);
    const tweets = (await w.source.getUserTweets(uid, { limit: 100 })).items;
    const quiet = tweets.find((t) => t.text === 'a clip')!;
    assert.deepEqual(await w.source.getRetweeters(quiet.id, { limit: 5 }), { items: [] });
    w.appView.posts.delete(w.posts.video.uri);
    await rejectsWith(w.source.getRetweeters(quiet.id, { limit: 5 }), 'not_found');
    await rejectsWith(w.source.getTweet(quiet.id), 'not_found');
  });
});

describe('Bluesky source: what cannot exist, and failures', () => {
  test('ids never assigned, handles that are not domain names, communities: not_found without asking', async () => {
    const w = buildWorld();
    await rejectsWith(w.source.getTweet('123456789'), 'not_found');
    await rejectsWith(w.source.getUserById('123456789'), 'not_found');
    await rejectsWith(w.source.getUserTweets('123456789', { limit: 5 }), 'not_found');
    await rejectsWith(w.source.getRetweeters('123456789', { limit: 5 }), 'not_found');
    await rejectsWith(w.source.getTweet('abc'), 'not_found');
    for (const name of ['alice', 'a_b.test', '-x.test', 'x.123']) await rejectsWith(w.source.getUserByUsername(name), 'not_found');
    await rejectsWith(w.source.getCommunity('1'), 'not_found');
    assert.deepEqual(w.appView.calls, []);
    await rejectsWith(w.source.getUserByUsername('nobody.test'), 'not_found');
  });

  test('429 → rate_limited with the reset time, and no call reaches the AppView before it', async () => {
    const w = buildWorld();
    const reset = Math.floor(Date.now() / 1000) + 120;
    w.appView.failures.push({ status: 429, body: { error: 'RateLimitExceeded', message: 'Rate Limit Exceeded' }, headers: { 'ratelimit-reset': String(reset), 'ratelimit-remaining': '0' } });
    const err = await rejectsWith(w.source.getUserByUsername('alice.test'), 'rate_limited');
    assert.equal(err.resetAt?.getTime(), reset * 1000);
    const calls = w.appView.calls.length;
    // Held back, without a request, until the reset.
    const again = await rejectsWith(w.source.getUserByUsername('bob.test'), 'rate_limited');
    assert.equal(again.resetAt?.getTime(), reset * 1000);
    assert.equal(w.appView.calls.length, calls);
  });

  test('a 429 with only Retry-After holds calls back for that long; after it, calls go out again', async () => {
    let now = Date.now();
    const w = buildWorld({ now: () => now });
    w.appView.failures.push({ status: 429, body: { error: 'RateLimitExceeded' }, headers: { 'retry-after': '30' } });
    const err = await rejectsWith(w.source.getUserByUsername('alice.test'), 'rate_limited');
    assert.equal(err.resetAt?.getTime(), now + 30_000);
    await rejectsWith(w.source.getUserByUsername('alice.test'), 'rate_limited');
    assert.equal(w.appView.calls.length, 1);
    now += 30_001;
    assert.equal((await w.source.getUserByUsername('alice.test')).username, 'alice.test');
    assert.equal(w.appView.calls.length, 2);
  });

  test('5xx and network failures → unavailable, with what the AppView said kept for the logs', async () => {
    const w = buildWorld();
    w.appView.failures.push({ status: 502, body: { error: 'UpstreamFailure', message: 'dataplane down' } });
    const down = await rejectsWith(w.source.getUserByUsername('alice.test'), 'unavailable');
    assert.deepEqual(down.upstream, { status: 502, body: 'UpstreamFailure: dataplane down' });
    w.appView.failures.push('network');
    const net = await rejectsWith(w.source.getUserByUsername('alice.test'), 'unavailable');
    assert.match(net.message, /ECONNREFUSED|fetch failed/);
  });

  test('no answer in time → timeout, and the request is aborted (the AppView sees its signal fire)', async () => {
    const w = buildWorld();
    const source = new ResilientSource(w.source, { timeoutMs: 150, retry: { ...quickRetryPolicy, retries: 0 } });
    w.appView.failures.push('hang');
    const started = Date.now();
    await rejectsWith(source.getUserByUsername('alice.test'), 'timeout');
    assert.ok(Date.now() - started < 2_000);
    assert.equal(w.appView.aborted, 1);
  });

  test('401/403 and a service that is not an AppView → rejected, naming BLUESKY_APPVIEW_URL', async () => {
    const w = buildWorld();
    w.appView.failures.push({ status: 403, body: { error: 'Forbidden' } });
    const forbidden = await rejectsWith(w.source.getUserByUsername('alice.test'), 'rejected');
    assert.match(forbidden.message, /BLUESKY_APPVIEW_URL/);
    w.appView.failures.push({ status: 501, body: { error: 'MethodNotImplemented' } });
    assert.match((await rejectsWith(w.source.getUserByUsername('alice.test'), 'rejected')).message, /is it an AppView/);
  });

  test('the readiness probe: /xrpc/_health answers → ready; a 5xx → unavailable', async () => {
    const w = buildWorld();
    await w.source.probe();
    assert.deepEqual(w.appView.calls, ['_health']);
    w.appView.failures.push({ status: 503, body: { error: 'Unavailable' } });
    await rejectsWith(w.source.probe(), 'unavailable');
  });

  test('answers that are not what the lexicon says → bad_response; a request it refuses → rejected', async () => {
    const w = buildWorld();
    w.appView.failures.push({ status: 200, body: { did: 'not a did', handle: 5 } });
    await rejectsWith(w.source.getUserByUsername('alice.test'), 'bad_response');
    w.appView.failures.push({ status: 400, body: { error: 'InvalidRequest', message: 'Error: limit must be <= 100' } });
    await rejectsWith(w.source.getUserByUsername('alice.test'), 'rejected');
    // A handle our check lets through but the AppView's does not: it cannot exist.
    w.appView.failures.push({ status: 400, body: { error: 'InvalidRequest', message: 'Error: actor must be a valid did or a handle' } });
    await rejectsWith(w.source.getUserByUsername('alice.local'), 'not_found');
  });
});
