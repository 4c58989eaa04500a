import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { Community, SocialProfile, Tweet } from '../../src/domain/models.js';
import { DemoSource } from '../../src/sources/demo/demo-source.js';
import { encodeTweetId, tweetLow } from '../../src/sources/demo/ids.js';
import { walkSlots } from '../../src/sources/demo/schedule.js';
import { slotId } from '../../src/sources/demo/tweets.js';
import { parseUserId, usernameOf, userCore } from '../../src/sources/demo/users.js';
import { clocked, DAY, findUsers, HOUR, NOW, rejectsWith } from './demo-helpers.js';

const { source } = clocked();
const epoch = source.net.epochMs;

/** A few hundred tweets from public users' timelines (every 13th user of the first 4,000). */
async function sampleTweets(src: DemoSource, perUser = 8): Promise<Tweet[]> {
  const out: Tweet[] = [];
  for (let i = 0; i < 4_000; i += 13) {
    const u = userCore(src.net, i);
    if (u.status !== 'public') continue;
    out.push(...(await src.getUserTweets(u.id, { limit: perUser })).items);
  }
  return out;
}

const tweets = await sampleTweets(source);

test('the source is named demo and the network is big', () => {
  assert.equal(source.name, 'demo');
  assert.equal(source.net.userCount, 200_000);
  assert.ok(tweets.length > 1_000, `${tweets.length} tweets sampled`);
});

test('determinism: the same seed gives the same objects, another seed other ones', async () => {
  const a = clocked({ seed: 42 }).source;
  const b = clocked({ seed: 42 }).source;
  const c = clocked({ seed: 43 }).source;
  const [ua] = findUsers(a, (u) => u.active, 1, 1_000);
  assert.ok(ua);
  assert.deepEqual(await a.getUserById(ua.id), await b.getUserById(ua.id));
  const pa = await a.getUserTweets(ua.id, { limit: 30 });
  const pb = await b.getUserTweets(ua.id, { limit: 30 });
  assert.deepEqual(pa, pb);
  const cid = a.net.communityIds.encode(17);
  assert.deepEqual(await a.getCommunity(cid), await b.getCommunity(cid));
  // another seed: other ids, other handles, other tweets
  assert.notEqual(c.net.userIds.encode(ua.index), ua.id);
  const cu = userCore(c.net, ua.index);
  assert.notEqual(usernameOf(c.net, ua.index), usernameOf(a.net, ua.index));
  if (cu.status === 'public') {
    const pc = await c.getUserTweets(cu.id, { limit: 30 });
    assert.notDeepEqual(pc.items.map((t) => t.text), pa.items.map((t) => t.text));
  }
  assert.notDeepEqual(await c.getCommunity(c.net.communityIds.encode(17)), await a.getCommunity(cid));
});

test('every profile, tweet and community validates against the models', async () => {
  let profiles = 0;
  for (let i = 0; i < 200_000; i += 611) {
    const id = source.net.userIds.encode(i);
    if (userCore(source.net, i).status === 'suspended') continue;
    const p = await source.getUserById(id);
    assert.ok(Value.Check(SocialProfile, p), JSON.stringify([...Value.Errors(SocialProfile, p)].slice(0, 2)));
    assert.equal(p.verified, p.verifiedType !== 'none');
    assert.equal(p.username, p.username.toLowerCase());
    assert.equal(p.displayUsername.toLowerCase(), p.username);
    profiles++;
  }
  assert.ok(profiles > 300);
  for (const t of tweets) assert.ok(Value.Check(Tweet, t), JSON.stringify([...Value.Errors(Tweet, t)].slice(0, 2)));
  for (let i = 0; i < source.net.communityCount; i += 37) {
    const c = await source.getCommunity(source.net.communityIds.encode(i));
    assert.ok(Value.Check(Community, c), JSON.stringify([...Value.Errors(Community, c)].slice(0, 2)));
    if (c.creatorId !== null) assert.ok(parseUserId(source.net, c.creatorId) >= 0, 'the creator is a real user');
    assert.ok(Date.parse(c.createdAt) < NOW);
  }
});

test('variety: verified types, protected and suspended shares, languages, media, kinds', async () => {
  const types = new Set<string>();
  let protectedCount = 0;
  let suspended = 0;
  const n = 20_000;
  for (let i = 0; i < n; i++) {
    const u = userCore(source.net, i);
    types.add(u.verifiedType);
    if (u.status === 'protected') protectedCount++;
    if (u.status === 'suspended') suspended++;
  }
  assert.deepEqual([...types].sort(), ['blue', 'business', 'government', 'none']);
  assert.ok(protectedCount / n > 0.02 && protectedCount / n < 0.04, `protected ${protectedCount / n}`);
  assert.ok(suspended / n > 0.005 && suspended / n < 0.015, `suspended ${suspended / n}`);
  const langs = new Set(tweets.map((t) => t.language));
  for (const l of ['en', 'es', 'fr', 'de', 'ja', 'pt']) assert.ok(langs.has(l), `language ${l}`);
  const media = new Set(tweets.flatMap((t) => t.media.map((m) => m.type)));
  assert.deepEqual([...media].sort(), ['animated_gif', 'photo', 'video']);
  assert.ok(tweets.some((t) => t.inReplyTo));
  assert.ok(tweets.some((t) => t.quotedTweetId));
  assert.ok(tweets.some((t) => t.retweetedTweetId));
  assert.ok(tweets.some((t) => t.entities.hashtags.length && t.entities.urls.length));
  assert.ok(tweets.some((t) => t.inReplyTo && t.conversationId !== t.inReplyTo.tweetId), 'replies to replies');
});

test('entity offsets point at the right characters of the text', () => {
  let checked = 0;
  for (const t of tweets) {
    for (const h of t.entities.hashtags) assert.equal(t.text.slice(h.start, h.end), `#${h.tag}`);
    for (const m of t.entities.mentions) assert.equal(t.text.slice(m.start, m.end), `@${m.username}`);
    for (const u of t.entities.urls) {
      assert.equal(t.text.slice(u.start, u.end), u.url);
      assert.match(u.url, /^https:\/\/[a-z.]+\.invalid\//);
      assert.match(u.expandedUrl, /^https:\/\/[a-z.]+\.invalid\//);
    }
    checked += t.entities.hashtags.length + t.entities.mentions.length + t.entities.urls.length;
  }
  assert.ok(checked > 300, `${checked} entities`);
});

test('tweets: urls, authors, references to existing earlier tweets, RT text, conversations', async () => {
  for (const t of tweets.slice(0, 600)) {
    const author = await source.getUserById(t.authorId);
    assert.equal(t.url, `https://demo.sdg.invalid/${author.username}/status/${t.id}`);
    assert.ok(Date.parse(t.createdAt) <= NOW);
    assert.ok(t.createdAt >= author.createdAt);
    for (const m of t.media) assert.ok((m.url ?? m.previewImageUrl ?? '').includes('.invalid/'));
    if (t.inReplyTo) {
      const parent = await source.getTweet(t.inReplyTo.tweetId);
      assert.equal(parent.authorId, t.inReplyTo.userId);
      assert.ok(parent.createdAt < t.createdAt);
      assert.equal(parent.conversationId, t.conversationId, 'a reply is in its parent conversation');
      assert.equal(parent.retweetedTweetId, null);
      const root = await source.getTweet(t.conversationId!);
      assert.equal(root.inReplyTo, null);
      assert.equal(root.conversationId, root.id);
      assert.equal(t.entities.mentions[0]?.start, 0, 'a reply starts with the mention');
      assert.equal(t.entities.mentions[0]?.id, t.inReplyTo.userId);
    } else {
      assert.equal(t.conversationId, t.id);
    }
    if (t.quotedTweetId) {
      const q = await source.getTweet(t.quotedTweetId);
      assert.ok(q.createdAt < t.createdAt);
      assert.equal(q.retweetedTweetId, null);
    }
    if (t.retweetedTweetId) {
      const o = await source.getTweet(t.retweetedTweetId);
      const ou = await source.getUserById(o.authorId);
      assert.ok(o.createdAt < t.createdAt);
      assert.equal(t.text, `RT @${ou.username}: ${o.text}`);
      assert.equal(t.language, o.language);
      assert.equal(o.retweetedTweetId, null);
      assert.equal(o.inReplyTo, null);
    }
  }
});

test('getTweet round-trips every id from the timelines', async () => {
  for (const t of tweets) assert.deepEqual(await source.getTweet(t.id), t);
});

test('pinned tweets exist and belong to the user', async () => {
  let pinned = 0;
  for (const u of findUsers(source, (x) => x.active, 200)) {
    const p = await source.getUserById(u.id);
    for (const id of p.pinnedTweetIds) {
      const t = await source.getTweet(id);
      assert.equal(t.authorId, u.id);
      assert.equal(t.retweetedTweetId, null);
      pinned++;
    }
    assert.ok(p.metrics.tweets >= 24 * Math.floor((NOW - Date.parse(p.createdAt)) / DAY), 'tweet count plausible');
  }
  assert.ok(pinned > 20, `${pinned} pinned`);
});

test('unknown and malformed ids, usernames and communities are not_found', async () => {
  const [u] = findUsers(source, (x) => x.active, 1, 50);
  assert.ok(u);
  const slots = walkSlots(source.net, u, { upperTs: NOW - epoch, lowerTs: 0, want: 1 }).slots;
  const s = slots[0]!;
  const real = slotId({ user: u.index, ts: s.ts, seq: s.seq });
  await source.getTweet(real);
  const badTweets = [
    '', 'abc', '0', '1', '-5', '01234', '99999999999999999999999', ' 1',
    encodeTweetId(s.ts + 1, tweetLow(u.index, s.seq)), // time off by one ms
    encodeTweetId(s.ts, tweetLow(u.index, 7)), // a sequence the bucket does not have (or at another time)
    encodeTweetId(s.ts, tweetLow(199_999 + 1, 0)), // a user beyond the network
    encodeTweetId(NOW - epoch + 30 * DAY, tweetLow(u.index, 0)), // the future
  ];
  for (const id of badTweets) {
    if (id === real) continue;
    await rejectsWith(source.getTweet(id), 'not_found', `tweet ${id}`);
    await rejectsWith(source.getRetweeters(id, { limit: 5 }), 'not_found', `retweeters ${id}`);
  }
  for (const id of ['', '1', 'abc', '1300000000000000x', '01300000000000000', String(Number(u.id) + 2 ** 21)]) {
    await rejectsWith(source.getUserById(id), 'not_found', `user ${id}`);
    await rejectsWith(source.getUserTweets(id, { limit: 5 }), 'not_found', `user tweets ${id}`);
  }
  const name = usernameOf(source.net, u.index);
  for (const n of ['', 'nobody', `${name}x`, name.replace(/_\d+$/, '_199999x'), `x${name}`, 'quiet falcon_1']) {
    await rejectsWith(source.getUserByUsername(n), 'not_found', `username ${n}`);
  }
  for (const id of ['', '1', '1500000000000000', 'x', source.net.communityIds.encode(5_000)]) {
    await rejectsWith(source.getCommunity(id), 'not_found', `community ${id}`);
  }
  await rejectsWith(source.getUserTweets(u.id, { limit: 5, after: 'nope' }), 'not_found', 'bad position');
  await rejectsWith(source.getRetweeters(real, { limit: 5, after: '12_999999' }), 'not_found', 'bad retweet position');
});

test('a tweet that exists later is not_found before its time', async () => {
  const later = clocked({}, NOW + 3 * HOUR);
  const [u] = findUsers(later.source, (x) => x.active, 1, 70);
  const top = (await later.source.getUserTweets(u!.id, { limit: 1 })).items[0]!;
  assert.ok(Date.parse(top.createdAt) > NOW, 'a tweet of the last hour');
  await rejectsWith(source.getTweet(top.id), 'not_found');
  later.clock.ms = Date.parse(top.createdAt);
  assert.equal((await later.source.getTweet(top.id)).id, top.id, 'exists from its createdAt on');
  later.clock.ms -= 1;
  await rejectsWith(later.source.getTweet(top.id), 'not_found', 'one ms earlier');
});

test('protected accounts: profile visible with protected=true, tweets not', async () => {
  for (const u of findUsers(source, (x) => x.status === 'protected', 5)) {
    const p = await source.getUserById(u.id);
    assert.equal(p.protected, true);
    assert.deepEqual(await source.getUserByUsername(p.username.toUpperCase()), p);
    await rejectsWith(source.getUserTweets(u.id, { limit: 10 }), 'protected');
    const s = walkSlots(source.net, u, { upperTs: NOW - epoch, lowerTs: 0, want: 1 }).slots[0];
    if (s) await rejectsWith(source.getTweet(slotId({ user: u.index, ...s })), 'protected');
  }
  const [pub] = findUsers(source, (x) => x.status === 'public', 1);
  assert.equal((await source.getUserById(pub!.id)).protected, false);
});

test('suspended accounts: every call about them is suspended', async () => {
  for (const u of findUsers(source, (x) => x.status === 'suspended', 5)) {
    await rejectsWith(source.getUserById(u.id), 'suspended');
    await rejectsWith(source.getUserByUsername(usernameOf(source.net, u.index)), 'suspended');
    await rejectsWith(source.getUserTweets(u.id, { limit: 10 }), 'suspended');
    const s = walkSlots(source.net, u, { upperTs: NOW - epoch, lowerTs: 0, want: 1 }).slots[0];
    assert.ok(s, 'suspended users have tweets too');
    const id = slotId({ user: u.index, ...s });
    await rejectsWith(source.getTweet(id), 'suspended');
    await rejectsWith(source.getRetweeters(id, { limit: 10 }), 'suspended');
  }
});
