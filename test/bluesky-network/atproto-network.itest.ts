// SOURCE=bluesky against a REAL local AT Protocol network (@atproto/dev-env's TestNetwork: PLC, PDS,
// AppView, Ozone), read through the gateway's endpoints. Separate suite, not in `npm test`'s globs:
//
//   TEST_ATPROTO=1 node --import tsx --test test/bluesky-network/atproto-network.itest.ts
//
// Without TEST_ATPROTO=1 the file registers no tests. Needs the machine's Postgres (the AppView's
// and Ozone's tables go in schemas of their own, dropped afterwards; TEST_ATPROTO_DATABASE_URL, else
// TEST_DATABASE_URL, else postgres://root@127.0.0.1:5432/test) and dev-env's Redis check
// (REDIS_HOST, default 127.0.0.1:6379). Every server of the network is bound to 127.0.0.1: dev-env
// listens on all interfaces and has no option for it, so `listen` is narrowed while it starts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { AtpAgent as AtpAgentType } from '@atproto/api';
import type { TestNetwork as TestNetworkType } from '@atproto/dev-env';
import pg from 'pg';
import type { SocialProfile, Tweet } from '../../src/domain/models.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, startHarness, type Harness, type TestAccount } from '../helpers/harness.js';

interface PageBody<T> {
  items: T[];
  hasNextPage: boolean;
  nextCursor: string | null;
}

type ListenArgs = Parameters<net.Server['listen']>;

/** Makes every `listen` without an explicit host bind 127.0.0.1; returns the servers it saw and an undo. */
function loopbackOnly(): { servers: net.Server[]; restore: () => void } {
  const original = net.Server.prototype.listen;
  const servers: net.Server[] = [];
  net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
    servers.push(this);
    const [first, second] = args;
    if (typeof first === 'number' || (typeof first === 'string' && /^[0-9]+$/.test(first))) {
      if (typeof second !== 'string') args.splice(1, 0, '127.0.0.1');
    } else if (first === undefined || typeof first === 'function') {
      args.unshift(0, '127.0.0.1');
    } else if (typeof first === 'object' && first !== null && !('path' in first) && !('handle' in first) && !('fd' in first)) {
      const options = first as net.ListenOptions;
      if (!options.host) args[0] = { ...options, host: '127.0.0.1' };
    }
    return original.apply(this, args as ListenArgs);
  } as typeof original;
  return { servers, restore: () => void (net.Server.prototype.listen = original) };
}

const H = 3_600_000;

if (process.env.TEST_ATPROTO === '1') {
  describe('Bluesky source against a local AT Protocol network', () => {
    const dbUrl = process.env.TEST_ATPROTO_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
    // dev-env allows letters and underscores only in schema names.
    const schema = `bsky_test_${[...randomBytes(8)].map((b) => String.fromCharCode(97 + (b % 26))).join('')}`;
    const savedEnv = { TMPDIR: process.env.TMPDIR, REDIS_HOST: process.env.REDIS_HOST };
    let workDir: string;
    let network: TestNetworkType;
    let listening: net.Server[] = [];

    const agents: Record<string, AtpAgentType> = {};
    const dids: Record<string, string> = {};
    const posts: Record<string, { uri: string; cid: string }> = {};
    let pagingCount = 0;

    before(async () => {
      // The PDS keeps its files under os.tmpdir(): a directory of ours, removed afterwards.
      workDir = mkdtempSync(join(tmpdir(), 'sdg-atproto-'));
      process.env.TMPDIR = workDir;
      process.env.REDIS_HOST ??= '127.0.0.1:6379';
      const { TestNetwork } = await import('@atproto/dev-env');
      const { AtpAgent, RichText } = await import('@atproto/api');
      const loopback = loopbackOnly();
      try {
        network = await TestNetwork.create({ dbPostgresUrl: dbUrl, dbPostgresSchema: schema });
      } finally {
        loopback.restore();
        listening = loopback.servers;
      }

      for (const name of ['alice', 'bob', 'carol', 'dave', 'hidden']) {
        const agent = new AtpAgent({ service: network.pds.url });
        await agent.createAccount({ email: `${name}@example.test`, handle: `${name}.test`, password: `${name}-pass` });
        agents[name] = agent;
        dids[name] = agent.session!.did;
      }
      const { alice, bob, carol, hidden } = agents as Record<'alice' | 'bob' | 'carol' | 'hidden', AtpAgentType>;
      await alice.upsertProfile((p) => ({ ...p, displayName: 'Alice 🌍', description: 'on a test network' }));

      const start = Date.now() - 48 * H;
      const at = (hours: number) => new Date(start + hours * H).toISOString();
      // Twelve plain posts for paging, an hour apart.
      for (let i = 0; i < 12; i++) {
        await alice.post({ text: `post number ${i}`, createdAt: at(i) });
        pagingCount++;
      }
      posts.bob = await bob.post({ text: 'bob was here', createdAt: at(13) });
      const rt = new RichText({ text: '🌍 hello @bob.test, read https://example.com/page?x=1 #atproto' });
      await rt.detectFacets(alice);
      posts.link = await alice.post({ text: rt.text, facets: rt.facets, langs: ['en'], createdAt: at(14) });
      posts.quote = await alice.post({ text: 'quoting bob', embed: { $type: 'app.bsky.embed.record', record: posts.bob }, createdAt: at(15) });
      posts.reply = await alice.post({ text: 'replying to bob', reply: { root: posts.bob, parent: posts.bob }, createdAt: at(16) });
      await bob.repost(posts.link.uri, posts.link.cid);
      await carol.repost(posts.link.uri, posts.link.cid);
      await alice.repost(posts.bob.uri, posts.bob.cid); // not in Alice's timeline: reposts are left out
      await hidden.upsertProfile((p) => ({ ...p, labels: { $type: 'com.atproto.label.defs#selfLabels', values: [{ val: '!no-unauthenticated' }] } }));
      await hidden.post({ text: 'for logged-in eyes only', createdAt: at(1) });
      await network.processAll();
      await network.bsky.ctx.dataplane.takedownActor({ did: dids.dave! });
    });

    after(async () => {
      await network?.close();
      const c = new pg.Client({ connectionString: dbUrl });
      await c.connect();
      try {
        for (const s of [`appview_${schema}`, `ozone_${schema}`]) await c.query(`drop schema if exists ${s} cascade`);
      } finally {
        await c.end();
      }
      for (const [k, v] of Object.entries(savedEnv)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      rmSync(workDir, { recursive: true, force: true });
    });

    test('every server of the network listens on 127.0.0.1 only', () => {
      const addresses = listening.map((s) => s.address()).filter((a): a is net.AddressInfo => typeof a === 'object' && a !== null);
      assert.ok(addresses.length >= 4, `servers seen: ${addresses.length}`);
      for (const a of addresses) assert.equal(a.address, '127.0.0.1', JSON.stringify(a));
      assert.match(network.bsky.url, /^http:\/\/localhost:[0-9]+$/);
    });

    for (const backend of backends()) {
      describe(`through the gateway (${backend})`, () => {
        let h: Harness;
        let acc: TestAccount;
        const get = (url: string) => h.app.inject({ url, headers: { 'x-api-key': acc.apiKey } });
        const profile = async (handle: string) => {
          const r = await get(`/social/v1/users/by/username/${handle}`);
          assert.equal(r.statusCode, 200, r.body);
          return json<{ data: SocialProfile }>(r).data;
        };
        const tweet = async (id: string) => {
          const r = await get(`/social/v1/tweets/${id}`);
          assert.equal(r.statusCode, 200, r.body);
          return json<{ data: Tweet }>(r).data;
        };

        before(async () => {
          // The harness builds the real source from configuration (build-source.ts), with the store's id map.
          h = await startHarness(backend, { SOURCE: 'bluesky', BLUESKY_APPVIEW_URL: network.bsky.url });
          acc = await h.account({ credits: 1_000_000 });
        });
        after(() => h.close());

        test('a profile by handle', async () => {
          const alice = await profile('alice.test');
          assert.match(alice.id, /^[0-9]+$/);
          assert.equal(alice.username, 'alice.test');
          assert.equal(alice.name, 'Alice 🌍');
          assert.equal(alice.description, 'on a test network');
          assert.equal(alice.protected, false);
          assert.equal(alice.verifiedType, 'none');
          assert.equal(alice.metrics.tweets, pagingCount + 3);
        });

        test("the user's tweets, newest first, paged with cursors, no reposts", async () => {
          const alice = await profile('alice.test');
          const walked: Tweet[] = [];
          let cursor: string | null = null;
          let pages = 0;
          do {
            const q: string = cursor ? `?limit=5&cursor=${encodeURIComponent(cursor)}` : '?limit=5';
            const r = await get(`/social/v1/users/${alice.id}/tweets${q}`);
            assert.equal(r.statusCode, 200, r.body);
            const b = json<PageBody<Tweet>>(r);
            assert.ok(b.items.length <= 5);
            walked.push(...b.items);
            cursor = b.nextCursor;
            pages++;
          } while (cursor && pages < 10);
          assert.equal(walked.length, pagingCount + 3);
          assert.equal(new Set(walked.map((t) => t.id)).size, walked.length);
          assert.deepEqual(walked.slice(0, 4).map((t) => t.text.split(' ')[0]), ['replying', 'quoting', '🌍', 'post']);
          for (let i = 1; i < walked.length; i++) {
            const [p, c] = [walked[i - 1]!, walked[i]!];
            assert.ok(p.createdAt > c.createdAt || (p.createdAt === c.createdAt && BigInt(p.id) > BigInt(c.id)), 'newest first');
            assert.ok(BigInt(p.id) > BigInt(c.id), 'ids follow time');
          }
          assert.ok(walked.every((t) => t.authorId === alice.id && t.retweetedTweetId === null));
        });

        test('a tweet by numeric id: facets after an emoji, quote, reply', async () => {
          const alice = await profile('alice.test');
          const bob = await profile('bob.test');
          const top = json<PageBody<Tweet>>(await get(`/social/v1/users/${alice.id}/tweets?limit=3`)).items;
          const [reply, quote, link] = top as [Tweet, Tweet, Tweet];

          const l = await tweet(link.id);
          assert.deepEqual(l, link);
          const cps = [...l.text];
          const [u] = l.entities.urls;
          assert.equal(u!.url, 'https://example.com/page?x=1');
          assert.equal(cps.slice(u!.start, u!.end).join(''), 'https://example.com/page?x=1');
          const [m] = l.entities.mentions;
          assert.deepEqual([m!.username, m!.id], ['bob.test', bob.id]);
          assert.equal(cps.slice(m!.start, m!.end).join(''), '@bob.test');
          const [tag] = l.entities.hashtags;
          assert.equal(tag!.tag, 'atproto');
          assert.equal(cps.slice(tag!.start, tag!.end).join(''), '#atproto');
          assert.equal(l.language, 'en');
          assert.match(l.url, /^https:\/\/bsky\.app\/profile\/alice\.test\/post\/[a-z2-7]{13}$/);
          assert.equal(l.metrics.retweets, 2);

          const q = await tweet(quote.id);
          assert.ok(q.quotedTweetId);
          assert.deepEqual(q.media, []);
          const quoted = await tweet(q.quotedTweetId);
          assert.equal(quoted.text, 'bob was here');
          assert.equal(quoted.authorId, bob.id);

          const r = await tweet(reply.id);
          assert.deepEqual(r.inReplyTo, { tweetId: q.quotedTweetId, userId: bob.id });
          assert.equal(r.conversationId, q.quotedTweetId);
        });

        test('retweeted_by: most recent repost first', async () => {
          const alice = await profile('alice.test');
          const link = json<PageBody<Tweet>>(await get(`/social/v1/users/${alice.id}/tweets?limit=3`)).items[2]!;
          const r = await get(`/social/v1/tweets/${link.id}/retweeted_by`);
          assert.equal(r.statusCode, 200, r.body);
          assert.deepEqual(json<PageBody<SocialProfile>>(r).items.map((p) => p.username), ['carol.test', 'bob.test']);
          const first = json<PageBody<SocialProfile>>(await get(`/social/v1/tweets/${link.id}/retweeted_by?limit=1`));
          assert.deepEqual(first.items.map((p) => p.username), ['carol.test']);
          assert.ok(first.nextCursor);
          const second = json<PageBody<SocialProfile>>(await get(`/social/v1/tweets/${link.id}/retweeted_by?limit=1&cursor=${encodeURIComponent(first.nextCursor)}`));
          assert.deepEqual(second.items.map((p) => p.username), ['bob.test']);
        });

        test('communities, unknown ids, a taken-down account: 404; a hidden account: protected, 403', async () => {
          for (const url of ['/social/v1/communities/1', '/social/v1/tweets/12345', '/social/v1/users/12345/tweets', '/social/v1/users/by/username/dave.test', '/social/v1/users/by/username/nobody.test']) {
            const r = await get(url);
            assert.equal(r.statusCode, 404, `${url}: ${r.body}`);
            assert.equal(errorOf(r).code, 'not_found');
          }
          const hidden = await profile('hidden.test');
          assert.equal(hidden.protected, true);
          const r = await get(`/social/v1/users/${hidden.id}/tweets`);
          assert.equal(r.statusCode, 403, r.body);
          assert.equal(errorOf(r).code, 'protected_account');
        });
      });
    }
  });
}
