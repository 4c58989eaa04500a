import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { SocialProfile, Tweet } from '../../src/domain/models.js';
import { parseAtUri } from '../../src/sources/bluesky/ids.js';
import { cidFor } from './fake-appview.js';
import { buildWorld, T0, type World } from './world.js';

describe('Bluesky source: profiles and posts map to the models', () => {
  let w: World;
  let alice: SocialProfile;
  let byText: Map<string, Tweet>;

  before(async () => {
    w = buildWorld();
    alice = await w.source.getUserByUsername('Alice.Test');
    const page = await w.source.getUserTweets(alice.id, { limit: 100 });
    byText = new Map(page.items.map((t) => [t.text, t]));
  });

  const idOf = async (uri: string) => (await w.idMap.postIds([{ uri, atMs: 0 }])).get(uri)!;
  const userIdOf = async (did: string) => (await w.idMap.userIds([did])).get(did)!;

  test('a profile: every field', async () => {
    assert.ok(Value.Check(SocialProfile, alice), JSON.stringify([...Value.Errors(SocialProfile, alice)]));
    assert.deepEqual(alice, {
      id: await userIdOf(w.actors.alice.did),
      username: 'alice.test',
      displayUsername: 'alice.test',
      name: 'Alice 🌸',
      description: 'hello',
      location: '',
      url: 'https://alice.example',
      profileImageUrl: 'https://cdn.example/avatar/alice',
      bannerUrl: 'https://cdn.example/banner/alice',
      createdAt: '2023-04-01T10:00:00.000Z',
      verified: true,
      verifiedType: 'blue',
      protected: false,
      metrics: { followers: 120, following: 80, tweets: 8, listed: 0, likes: 0, media: 0 },
      pinnedTweetIds: [byText.get(w.posts.link.record.text as string)!.id],
    });
    assert.deepEqual(await w.source.getUserById(alice.id), alice);
  });

  test('profiles: handle lowercased, display name defaults to the handle, trusted verifiers, protected', async () => {
    const bob = await w.source.getUserByUsername('bob.test');
    assert.equal(bob.username, 'bob.test');
    assert.equal(bob.displayUsername, 'bob.test');
    assert.equal(bob.name, 'bob.test');
    assert.equal(bob.verifiedType, 'none');
    assert.equal(bob.verified, false);
    assert.equal(bob.url, null);
    assert.equal(bob.bannerUrl, null);
    const frank = await w.source.getUserByUsername('@frank.test');
    assert.deepEqual([frank.verified, frank.verifiedType], [true, 'business']);
    const carol = await w.source.getUserByUsername('carol.test');
    assert.equal(carol.protected, true);
    for (const p of [bob, frank, carol]) assert.ok(Value.Check(SocialProfile, p));
  });

  test('a post with a link, a tag and a mention after an emoji; language; url; metrics', async () => {
    const t = byText.get(w.posts.link.record.text as string)!;
    assert.ok(Value.Check(Tweet, t), JSON.stringify([...Value.Errors(Tweet, t)]));
    const rkey = parseAtUri(w.posts.link.uri)!.rkey;
    assert.equal(t.url, `https://bsky.app/profile/alice.test/post/${rkey}`);
    assert.equal(t.authorId, alice.id);
    assert.equal(t.language, 'en');
    assert.equal(t.createdAt, new Date(T0).toISOString());
    assert.equal(t.conversationId, t.id, 'a post that is not a reply starts its own conversation');
    assert.equal(t.inReplyTo, null);
    assert.deepEqual(t.metrics, { retweets: 3, replies: 1, likes: 3, quotes: 0, views: 0, bookmarks: 2 });
    const cps = [...t.text];
    const [u] = t.entities.urls;
    assert.equal(cps.slice(u!.start, u!.end).join(''), 'example.com/x');
    assert.deepEqual([u!.url, u!.expandedUrl, u!.displayUrl], ['https://example.com/x', 'https://example.com/x', 'example.com/x']);
    assert.equal(u!.start, 11);
    const [h] = t.entities.hashtags;
    assert.deepEqual(h, { tag: 'fun', start: 25, end: 29 });
    const [m] = t.entities.mentions;
    assert.deepEqual(m, { username: 'bob.test', id: await userIdOf(w.actors.bob.did), start: 35, end: 44 });
    assert.deepEqual(await w.source.getTweet(t.id), t);
  });

  test('images: photos with full-size url, thumbnail, alt text and size; the blob CID is the media id', () => {
    const t = byText.get('two pictures')!;
    assert.equal(t.media.length, 2);
    assert.deepEqual(t.media[0], {
      id: cidFor('img1', 0x55),
      type: 'photo',
      url: `https://cdn.example/img/feed_fullsize/plain/${w.actors.alice.did}/${cidFor('img1', 0x55)}@jpeg`,
      previewImageUrl: `https://cdn.example/img/feed_thumbnail/plain/${w.actors.alice.did}/${cidFor('img1', 0x55)}@jpeg`,
      width: 1200,
      height: 800,
      altText: 'a cat',
    });
    assert.equal(t.media[1]!.altText, null, 'an empty alt text is none');
    assert.equal(t.media[1]!.width, null);
    assert.equal(t.quotedTweetId, null);
  });

  test('a video', () => {
    const [v] = byText.get('a clip')!.media;
    const cid = cidFor('video', 0x55);
    assert.deepEqual(v, {
      id: cid,
      type: 'video',
      url: `https://video.example/${cid}/playlist.m3u8`,
      previewImageUrl: `https://video.example/${cid}/thumbnail.jpg`,
      width: 1920,
      height: 1080,
      altText: 'waves',
    });
  });

  test('quotes: the quoted post id, with and without media', async () => {
    const quote = byText.get('look at this')!;
    assert.equal(quote.quotedTweetId, await idOf(w.posts.bobRoot.uri));
    assert.deepEqual(quote.media, []);
    const withMedia = byText.get('again, with a picture')!;
    assert.equal(withMedia.quotedTweetId, byText.get(w.posts.link.record.text as string)!.id);
    assert.equal(withMedia.media.length, 1);
    assert.equal(withMedia.media[0]!.altText, 'sunset');
    // The quoted post can be read by that id.
    const quoted = await w.source.getTweet(quote.quotedTweetId!);
    assert.equal(quoted.text, 'bob says hi');
    assert.equal(quoted.authorId, await userIdOf(w.actors.bob.did));
  });

  test('replies: inReplyTo the parent and its author, conversation = the root', async () => {
    const reply = byText.get('hi bob')!;
    const rootId = await idOf(w.posts.bobRoot.uri);
    assert.deepEqual(reply.inReplyTo, { tweetId: rootId, userId: await userIdOf(w.actors.bob.did) });
    assert.equal(reply.conversationId, rootId);
    const bobReplyId = await idOf(w.posts.bobReply.uri);
    const bobReply = await w.source.getTweet(bobReplyId);
    assert.deepEqual(bobReply.inReplyTo, { tweetId: reply.id, userId: alice.id });
    assert.equal(bobReply.conversationId, rootId);
  });

  test('createdAt is when the post sorts: a future date is capped at indexing, a back-date is kept', () => {
    assert.equal(byText.get('from the future')!.createdAt, new Date(T0 + 6 * 3_600_000).toISOString());
    assert.equal(byText.get('an old one')!.createdAt, '2019-01-01T00:00:00.000Z');
  });

  test('ids of posts first seen as references agree with the ids they get when read', async () => {
    const w2 = buildWorld();
    const bob = await w2.source.getUserByUsername('bob.test');
    const replyUri = w2.posts.reply.uri;
    // Bob's reply refers to Alice's reply: its id is minted from the reference.
    const bobTweets = await w2.source.getUserTweets(bob.id, { limit: 10 });
    const bobReply = bobTweets.items.find((t) => t.text === 'hi alice')!;
    const aliceReply = await w2.source.getTweet(bobReply.inReplyTo!.tweetId);
    assert.equal(aliceReply.text, 'hi bob');
    assert.equal((await w2.idMap.postIds([{ uri: replyUri, atMs: 0 }])).get(replyUri), bobReply.inReplyTo!.tweetId);
  });
});
