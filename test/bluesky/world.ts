// A small Bluesky world on the fake AppView, with the cases the mapping must get right.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BlueskySource } from '../../src/sources/bluesky/bluesky-source.js';
import { MemoryIdMap } from '../../src/sources/bluesky/id-map.js';
import { FakeAppView, cidFor, facetOver, link, mention, tag, type FakeActor, type FakePost } from './fake-appview.js';

export const T0 = Date.parse('2025-05-01T12:00:00.000Z');
const H = 3_600_000;

export interface World {
  appView: FakeAppView;
  idMap: MemoryIdMap;
  source: BlueskySource;
  actors: Record<'alice' | 'bob' | 'carol' | 'dave' | 'erin' | 'frank', FakeActor>;
  posts: Record<'link' | 'images' | 'video' | 'bobRoot' | 'quote' | 'reply' | 'bobReply' | 'quoteWithMedia' | 'future' | 'backdated' | 'carolPost', FakePost>;
}

const blob = (seed: string) => ({ $type: 'blob', ref: { $link: cidFor(seed, 0x55) }, mimeType: 'image/jpeg', size: 1000 });
const cdn = (did: string, seed: string, kind: string) => `https://cdn.example/img/${kind}/plain/${did}/${cidFor(seed, 0x55)}@jpeg`;

export function buildWorld(opts: { now?: () => number } = {}): World {
  const appView = new FakeAppView();
  const alice = appView.addActor('alice.test', {
    displayName: 'Alice 🌸',
    description: 'hello',
    website: 'https://alice.example',
    avatar: 'https://cdn.example/avatar/alice',
    banner: 'https://cdn.example/banner/alice',
    followers: 120,
    follows: 80,
    verification: 'verified',
  });
  const bob = appView.addActor('bob.test');
  const carol = appView.addActor('carol.test', { labels: ['!no-unauthenticated'] });
  const dave = appView.addActor('dave.test', { status: 'takendown' });
  const erin = appView.addActor('erin.test', { status: 'deactivated' });
  const frank = appView.addActor('frank.test', { verification: 'verifier' });

  const linkText = '🎉 party at example.com/x #fun with @bob.test';
  const linkPost = appView.addPost(alice, linkText, {
    at: T0,
    record: {
      langs: ['en', 'fr'],
      facets: [
        facetOver(linkText, 'example.com/x', link('https://example.com/x')),
        facetOver(linkText, '#fun', tag('fun')),
        facetOver(linkText, '@bob.test', mention(bob.did)),
      ],
    },
  });
  const images = appView.addPost(alice, 'two pictures', {
    at: T0 + 1 * H,
    record: {
      embed: {
        $type: 'app.bsky.embed.images',
        images: [
          { image: blob('img1'), alt: 'a cat', aspectRatio: { width: 1200, height: 800 } },
          { image: blob('img2'), alt: '' },
        ],
      },
    },
    embedView: {
      $type: 'app.bsky.embed.images#view',
      images: [
        { thumb: cdn(alice.did, 'img1', 'feed_thumbnail'), fullsize: cdn(alice.did, 'img1', 'feed_fullsize'), alt: 'a cat', aspectRatio: { width: 1200, height: 800 } },
        { thumb: cdn(alice.did, 'img2', 'feed_thumbnail'), fullsize: cdn(alice.did, 'img2', 'feed_fullsize'), alt: '' },
      ],
    },
  });
  const videoCid = cidFor('video', 0x55);
  const video = appView.addPost(alice, 'a clip', {
    at: T0 + 2 * H,
    record: { embed: { $type: 'app.bsky.embed.video', video: blob('video'), alt: 'waves', aspectRatio: { width: 1920, height: 1080 } } },
    embedView: {
      $type: 'app.bsky.embed.video#view',
      cid: videoCid,
      playlist: `https://video.example/${videoCid}/playlist.m3u8`,
      thumbnail: `https://video.example/${videoCid}/thumbnail.jpg`,
      alt: 'waves',
      aspectRatio: { width: 1920, height: 1080 },
    },
  });
  const bobRoot = appView.addPost(bob, 'bob says hi', { at: T0 + 0.5 * H });
  const quote = appView.addPost(alice, 'look at this', {
    at: T0 + 3 * H,
    record: { embed: { $type: 'app.bsky.embed.record', record: { uri: bobRoot.uri, cid: bobRoot.cid } } },
    embedView: appView.quoteView(bobRoot),
  });
  const reply = appView.addPost(alice, 'hi bob', {
    at: T0 + 4 * H,
    record: { reply: { root: { uri: bobRoot.uri, cid: bobRoot.cid }, parent: { uri: bobRoot.uri, cid: bobRoot.cid } } },
  });
  const bobReply = appView.addPost(bob, 'hi alice', {
    at: T0 + 4.5 * H,
    record: { reply: { root: { uri: bobRoot.uri, cid: bobRoot.cid }, parent: { uri: reply.uri, cid: reply.cid } } },
  });
  const quoteWithMedia = appView.addPost(alice, 'again, with a picture', {
    at: T0 + 5 * H,
    record: {
      embed: {
        $type: 'app.bsky.embed.recordWithMedia',
        record: { $type: 'app.bsky.embed.record', record: { uri: linkPost.uri, cid: linkPost.cid } },
        media: { $type: 'app.bsky.embed.images', images: [{ image: blob('img3'), alt: 'sunset' }] },
      },
    },
    embedView: {
      $type: 'app.bsky.embed.recordWithMedia#view',
      record: appView.quoteView(linkPost),
      media: {
        $type: 'app.bsky.embed.images#view',
        images: [{ thumb: cdn(alice.did, 'img3', 'feed_thumbnail'), fullsize: cdn(alice.did, 'img3', 'feed_fullsize'), alt: 'sunset' }],
      },
    },
  });
  // Dated 100 days ahead by its client, indexed at T0+6h: it sorts (and is dated) at T0+6h.
  const future = appView.addPost(alice, 'from the future', { at: T0 + 100 * 24 * H, indexedAt: T0 + 6 * H });
  // Imported from elsewhere: dated 2019, indexed at T0+7h. It sorts at 2019.
  const backdated = appView.addPost(alice, 'an old one', { at: Date.parse('2019-01-01T00:00:00.000Z'), indexedAt: T0 + 7 * H });
  const carolPost = appView.addPost(carol, 'hidden from logged-out readers', { at: T0 });
  appView.addPost(dave, 'gone', { at: T0 });

  appView.repost(bobRoot, alice, T0 + 5.5 * H);
  appView.repost(linkPost, bob, T0 + 1 * H);
  appView.repost(linkPost, frank, T0 + 2 * H);
  appView.repost(linkPost, dave, T0 + 3 * H);
  alice.pinned = { uri: linkPost.uri, cid: linkPost.cid };

  const idMap = new MemoryIdMap();
  const source = new BlueskySource({ appViewUrl: 'https://appview.example', idMap, fetch: appView.fetch, ...(opts.now ? { now: opts.now } : {}) });
  return {
    appView,
    idMap,
    source,
    actors: { alice, bob, carol, dave, erin, frank },
    posts: { link: linkPost, images, video, bobRoot, quote, reply, bobReply, quoteWithMedia, future, backdated, carolPost },
  };
}

/** The fake AppView on a loopback port, for a gateway started with SOURCE=bluesky. */
export async function serveAppView(w: World): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    void (async () => {
      const answer = await w.appView.fetch(new URL(req.url ?? '/', 'http://127.0.0.1'), { method: req.method ?? 'GET' });
      res.writeHead(answer.status, Object.fromEntries(answer.headers));
      res.end(Buffer.from(await answer.arrayBuffer()));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
