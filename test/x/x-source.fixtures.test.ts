// XSource against recorded-style X answers served from test/x/fixtures by a loopback server:
// mapping of both naming eras, partial errors, HTTP failures, rate limits and timeouts.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Community, SocialProfile, Tweet } from '../../src/domain/models.js';
import { SourceError, type SourceErrorKind } from '../../src/sources/types.js';
import { quickRetryPolicy, ResilientSource } from '../../src/sources/resilience.js';
import { XSource, type XSourceOptions } from '../../src/sources/x/x-source.js';
import { assertSchema, startFixtureServer, TOKEN, type FixtureServer } from './helpers.js';

const T0 = 1_750_000_000_000; // a fixed "now" for rate-limit arithmetic

let server: FixtureServer;
let clock = T0;

before(async () => {
  server = await startFixtureServer();
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  clock = T0;
});

function source(extra: Partial<XSourceOptions> = {}): XSource {
  return new XSource({ bearerToken: TOKEN, baseUrl: server.baseUrl, now: () => clock, ...extra });
}

async function rejectsWith(promise: Promise<unknown>, kind: SourceErrorKind, message?: RegExp): Promise<SourceError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof SourceError, `expected a SourceError, got ${String(err)}`);
    assert.equal(err.kind, kind, `kind of "${err.message}"`);
    if (message) assert.match(err.message, message);
    assert.ok(!err.message.includes(TOKEN), 'the message leaks the bearer token');
    return err;
  }
  assert.fail(`expected SourceError ${kind}`);
}

function lastQuery(pathname: string): URLSearchParams {
  const seen = server.seen.filter((r) => r.path === pathname);
  const last = seen[seen.length - 1];
  assert.ok(last, `no request to ${pathname}`);
  return last.query;
}

describe('XSource mapping', () => {
  it('maps a user with tweet-era names, and asks with the OpenAPI document\'s parameters', async () => {
    server.on('/2/users/by/username/XDevelopers', { file: 'user-tweet-era.json' });
    const user = await source().getUserByUsername('@XDevelopers');
    assertSchema(SocialProfile, user, 'user');
    assert.deepEqual(user, {
      id: '2244994945',
      username: 'xdevelopers',
      displayUsername: 'XDevelopers',
      name: 'Developers',
      description: 'The voice of the X Dev team and your official source for updates.',
      location: '127.0.0.1',
      url: 'https://developer.x.com',
      profileImageUrl: 'https://pbs.twimg.com/profile_images/1683325380441128960/yRsRRjGO_normal.jpg',
      bannerUrl: 'https://pbs.twimg.com/profile_banners/2244994945/1690213128',
      createdAt: '2013-12-14T04:35:55.000Z',
      verified: true,
      verifiedType: 'business',
      protected: false,
      metrics: { followers: 583423, following: 2048, tweets: 14052, listed: 1672, likes: 2140, media: 905 },
      pinnedTweetIds: ['1722701605825642574'],
    });
    const seen = server.seen[server.seen.length - 1];
    assert.equal(seen?.authorization, `Bearer ${TOKEN}`);
    const query = lastQuery('/2/users/by/username/XDevelopers');
    assert.equal(query.get('expansions'), 'pinned_post_id');
    assert.ok(query.get('user.fields')?.split(',').includes('public_metrics'));
  });

  it('maps a user with post-era names, defaulting what is missing', async () => {
    server.on('/2/users/783214', { file: 'user-post-era.json' });
    const user = await source().getUserById('783214');
    assertSchema(SocialProfile, user, 'user');
    assert.equal(user.username, 'x');
    assert.equal(user.displayUsername, 'X');
    assert.equal(user.url, null); // "" upstream
    assert.equal(user.bannerUrl, null);
    assert.equal(user.location, '');
    assert.equal(user.verifiedType, 'blue'); // unknown type, verified
    assert.deepEqual(user.metrics, { followers: 68000000, following: 0, tweets: 15400, listed: 88000, likes: 0, media: 0 });
    assert.deepEqual(user.pinnedTweetIds, ['1800000000000000001']);
  });

  it('uses note_tweet for long posts, with its entities, and media from includes', async () => {
    server.on('/2/tweets/1850000000000000001', { file: 'tweet-long-note.json' });
    const tweet = await source().getTweet('1850000000000000001');
    assertSchema(Tweet, tweet, 'tweet');
    assert.match(tweet.text, /^A long post about #TypeScript that goes on well beyond 280 characters/);
    assert.equal(tweet.url, 'https://x.com/XDevelopers/status/1850000000000000001');
    assert.deepEqual(tweet.entities, {
      hashtags: [{ tag: 'TypeScript', start: 18, end: 29 }],
      urls: [{ url: 'https://t.co/zzzzYYYY99', expandedUrl: 'https://example.com/story', displayUrl: 'example.com/story', start: 100, end: 123 }],
      mentions: [{ username: 'jack', id: '12', start: 82, end: 87 }],
    });
    assert.deepEqual(tweet.media, [
      { id: '3_1850000000000000010', type: 'photo', url: 'https://pbs.twimg.com/media/GaBcDeF.jpg', previewImageUrl: null, width: 1200, height: 675, altText: 'A chart' },
      { id: '7_1850000000000000011', type: 'video', url: null, previewImageUrl: 'https://pbs.twimg.com/ext_tw_video_thumb/1/pu/img/v.jpg', width: 1280, height: 720, altText: null },
    ]); // an unknown media type and a key missing from includes are left out
    assert.deepEqual(tweet.metrics, { retweets: 12, replies: 3, likes: 140, quotes: 2, views: 20400, bookmarks: 9 });
    assert.equal(tweet.inReplyTo, null);
    const query = lastQuery('/2/tweets/1850000000000000001');
    assert.ok(query.get('post.fields')?.split(',').includes('note_post'));
    assert.deepEqual(query.get('expansions')?.split(','), ['attachments.media_keys', 'author_id', 'in_reply_to_user_id', 'referenced_posts']);
  });

  it('maps post-era referenced posts: reply and quote; permalink without a known author', async () => {
    server.on('/2/tweets/1860000000000000002', { file: 'tweet-post-era-reply.json' });
    const tweet = await source().getTweet('1860000000000000002');
    assertSchema(Tweet, tweet, 'tweet');
    assert.deepEqual(tweet.inReplyTo, { tweetId: '1850000000000000001', userId: '2244994945' });
    assert.equal(tweet.quotedTweetId, '1840000000000000003');
    assert.equal(tweet.retweetedTweetId, null);
    assert.equal(tweet.url, 'https://x.com/i/status/1860000000000000002');
    assert.equal(tweet.metrics.retweets, 4);
    assert.deepEqual(tweet.entities.mentions, [{ username: 'XDevelopers', id: '2244994945', start: 0, end: 12 }]);
    assert.deepEqual(tweet.media, []);
  });

  it('maps a community with defaults for what X does not have', async () => {
    server.on('/2/communities/1471580197908586507', { file: 'community.json' });
    const community = await source().getCommunity('1471580197908586507');
    assertSchema(Community, community, 'community');
    assert.deepEqual(community, {
      id: '1471580197908586507',
      name: 'Tennis',
      description: 'A place to talk about tennis',
      memberCount: 4821,
      moderatorCount: 0,
      createdAt: '2021-12-16T20:18:43.000Z',
      access: 'public',
      joinPolicy: 'restricted',
      rules: [],
      bannerUrl: null,
      creatorId: null,
    });
    assert.equal(lastQuery('/2/communities/1471580197908586507').get('community.fields'), 'access,created_at,description,id,join_policy,member_count,name');
  });

  it('pages retweeters with X\'s next_token; retweetedAt is unknown', async () => {
    server.on('/2/tweets/20/retweeted_by', { file: 'retweeters.json' });
    const page = await source().getRetweeters('20', { limit: 2, after: 'previousToken123' });
    assert.equal(page.items.length, 2);
    for (const edge of page.items) {
      assertSchema(SocialProfile, edge.user, 'retweeter');
      assert.equal(edge.retweetedAt, null);
    }
    assert.equal(page.items[1]?.user.username, 'someone_else');
    assert.equal(page.items[1]?.user.metrics.tweets, 30);
    assert.equal(page.next, '7140dibdnow9c7btw3z2vwioavpvutgzrzm9icis4ndix');
    const query = lastQuery('/2/tweets/20/retweeted_by');
    assert.equal(query.get('max_results'), '2');
    assert.equal(query.get('pagination_token'), 'previousToken123');
  });
});

describe('XSource timelines', () => {
  const path = '/2/users/2244994945/tweets';

  it('asks for at least 5, returns newest first trimmed to the limit, and continues below the last one', async () => {
    server.on(path, { file: 'timeline-tweet-era.json' });
    const x = source();
    const page = await x.getUserTweets('2244994945', {
      limit: 3,
      sinceId: '1000',
      startTime: new Date('2024-11-01T00:00:00.250Z'),
      endTime: new Date('2024-12-31T00:00:00Z'),
    });
    for (const tweet of page.items) assertSchema(Tweet, tweet, 'tweet');
    assert.deepEqual(
      page.items.map((t) => t.id),
      ['1870000000000000009', '1870000000000000007', '1870000000000000005'],
    );
    const query = lastQuery(path);
    assert.equal(query.get('max_results'), '5');
    assert.equal(query.get('since_id'), '1000');
    assert.equal(query.get('start_time'), '2024-11-01T00:00:01Z'); // rounded up to X's seconds
    assert.equal(query.get('end_time'), '2024-12-31T00:00:00Z');
    assert.equal(query.get('pagination_token'), null);
    // Trimming would lose tweets 4 and 5 if we passed on X's next_token, so the cursor is our own.
    assert.equal(page.next, 'until_id:1870000000000000005');

    const [newest, retweet] = page.items;
    assert.equal(newest?.media[0]?.type, 'animated_gif');
    assert.deepEqual(newest?.entities.hashtags, [{ tag: 'api', start: 12, end: 16 }]);
    assert.equal(retweet?.retweetedTweetId, '20');
    assert.equal(retweet?.metrics.retweets, 120000);
    assert.equal(page.items[2]?.metrics.views, 0); // missing counters are 0

    await x.getUserTweets('2244994945', { limit: 3, after: page.next });
    const next = lastQuery(path);
    assert.equal(next.get('until_id'), '1870000000000000005');
    assert.equal(next.get('pagination_token'), null);
  });

  it('passes X\'s next_token through when nothing was trimmed', async () => {
    server.on(path, { file: 'timeline-tweet-era.json' });
    const page = await source().getUserTweets('2244994945', { limit: 20, after: 'abcTOKEN' });
    assert.equal(page.items.length, 5);
    assert.equal(page.next, '7140dibdnow9c7btw423x1sx2hq0c0kcdfgm5c2zfjtc4');
    const query = lastQuery(path);
    assert.equal(query.get('max_results'), '20');
    assert.equal(query.get('pagination_token'), 'abcTOKEN');
  });

  it('returns an empty page when X has no tweets', async () => {
    server.on(path, { file: 'timeline-empty.json' });
    assert.deepEqual(await source().getUserTweets('2244994945', { limit: 10 }), { items: [] });
  });

  it('reports a protected account (not-authorized-for-resource)', async () => {
    server.on('/2/users/1234567890/tweets', { file: 'errors-timeline-not-authorized.json' });
    await rejectsWith(source().getUserTweets('1234567890', { limit: 10 }), 'protected');
  });

  it('can ask with the tweet-era parameter names', async () => {
    server.on(path, { file: 'timeline-tweet-era.json' });
    await source({ dialect: 'tweets' }).getUserTweets('2244994945', { limit: 5 });
    const query = lastQuery(path);
    assert.ok(query.get('tweet.fields')?.split(',').includes('note_tweet'));
    assert.equal(query.get('post.fields'), null);
  });
});

describe('XSource partial errors (200 with errors[] and no data)', () => {
  it('not found', async () => {
    server.on('/2/users/by/username/nosuchuser12', { file: 'errors-user-not-found.json' });
    await rejectsWith(source().getUserByUsername('nosuchuser12'), 'not_found');
    server.on('/2/tweets/1999999999999999999', { file: 'errors-tweet-not-found.json' });
    await rejectsWith(source().getTweet('1999999999999999999'), 'not_found');
  });

  it('suspended', async () => {
    server.on('/2/users/by/username/suspended_one', { file: 'errors-user-suspended.json' });
    await rejectsWith(source().getUserByUsername('suspended_one'), 'suspended');
  });

  it('no data and no errors is a bad response', async () => {
    server.on('/2/users/77', { json: { meta: {} } });
    await rejectsWith(source().getUserById('77'), 'bad_response');
  });

  it('ids and usernames that cannot exist are not_found without a request', async () => {
    const before = server.seen.length;
    await rejectsWith(source().getUserByUsername('no-such-name!'), 'not_found');
    await rejectsWith(source().getTweet('12abc'), 'not_found');
    await rejectsWith(source().getCommunity('../2/users'), 'not_found');
    assert.equal(server.seen.length, before);
  });
});

describe('XSource HTTP failures', () => {
  it('401: rejected, naming X_BEARER_TOKEN; the token is in neither the message nor what is kept for the logs', async () => {
    server.on('/2/users/401', { status: 401, json: { title: 'Unauthorized', detail: `Bad token Bearer ${TOKEN}`, status: 401 }, headers: { 'content-type': 'application/problem+json' } });
    const err = await rejectsWith(source().getUserById('401'), 'rejected', /^X rejected the bearer token \(HTTP 401\): check X_BEARER_TOKEN$/);
    assert.equal(err.upstream?.status, 401);
    assert.ok(!JSON.stringify(err.upstream).includes(TOKEN), 'the logged body leaks the token');
    assert.match(err.upstream?.body ?? '', /Bad token Bearer \[redacted\]/);
  });

  it("403: rejected, naming X_BEARER_TOKEN, the plan, and X's reason", async () => {
    server.on('/2/users/403', { status: 403, file: 'problem-403-client-not-enrolled.json', headers: { 'content-type': 'application/problem+json' } });
    const err = await rejectsWith(source().getUserById('403'), 'rejected', /HTTP 403 \(client-forbidden\)\): check X_BEARER_TOKEN and that its app's project and API plan include this endpoint/);
    assert.match(err.upstream?.body ?? '', /client-not-enrolled/);
  });

  it('404 is not_found', async () => {
    server.on('/2/tweets/404', { status: 404, json: { title: 'Not Found Error', type: 'about:blank', status: 404 } });
    await rejectsWith(source().getTweet('404'), 'not_found');
  });

  it('500 is unavailable, with the Problem\'s title', async () => {
    server.on('/2/users/500', { status: 500, file: 'problem-500.json', headers: { 'content-type': 'application/problem+json' } });
    await rejectsWith(source().getUserById('500'), 'unavailable', /HTTP 500.*Internal Server Error/);
  });

  it('400: rejected (retrying will not help), naming the parameter X refused and what X said', async () => {
    server.on('/2/users/400', { status: 400, json: { errors: [{ message: 'The `id` query parameter value [x] is not valid' }], title: 'Invalid Request' } });
    const plain = await rejectsWith(source().getUserById('400'), 'rejected', /HTTP 400 \(rejected parameter: id\): The `id` query parameter value \[x\] is not valid/);
    assert.deepEqual(plain.upstream?.parameters, ['id']);
    server.on('/2/users/401400', { status: 400, file: 'problem-400-unknown-parameter.json' });
    const named = await rejectsWith(source({ dialect: 'tweets' }).getUserById('401400'), 'rejected', /rejected parameter: post\.fields\): The query parameter \[post\.fields\] is not one of/);
    assert.deepEqual(named.upstream?.parameters, ['post.fields']);
  });

  it('through the resilience layer: a 400 is logged at warn with the refused parameter; a 503 at debug with what X said, each attempt', async () => {
    server.on('/2/users/40040', { status: 400, file: 'problem-400-field-value.json' });
    server.on('/2/users/50350', { status: 503, json: { title: 'Service Unavailable', detail: 'over capacity' } });
    const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
    const at = (level: string) => (obj: object, msg: string) => void lines.push({ level, obj: obj as Record<string, unknown>, msg });
    const log = { debug: at('debug'), info: at('info'), warn: at('warn') };
    // user.fields differs between the vocabularies: the source switches once, asks again, and gives up.
    const x = new ResilientSource(source({ dialect: 'posts', log }), { log, retry: { ...quickRetryPolicy, baseDelayMs: 1, maxDelayMs: 1 } });
    await rejectsWith(x.getUserById('50350'), 'unavailable', /HTTP 503.*over capacity/);
    const debug = lines.filter((l) => l.level === 'debug' && l.obj.operation === 'getUserById');
    assert.equal(debug.length, 3, 'every attempt');
    assert.deepEqual(debug[0]!.obj.upstream, { status: 503, body: '{"title":"Service Unavailable","detail":"over capacity"}' });
    lines.length = 0;
    await rejectsWith(x.getUserById('40040'), 'rejected', /rejected parameter: user\.fields/);
    const warned = lines.filter((l) => l.level === 'warn' && l.obj.operation === 'getUserById');
    assert.equal(warned.length, 1);
    assert.deepEqual((warned[0]!.obj.upstream as { parameters: string[] }).parameters, ['user.fields']);
    assert.match(warned[0]!.msg, /X refused the request for user 40040 with HTTP 400 \(rejected parameter: user\.fields\)/);
  });

  it('the readiness probe: @X answers → ready; a 404 means X_BASE_URL is not the X API; a 401 names X_BEARER_TOKEN', async () => {
    server.on('/2/users/by/username/X', { file: 'user-post-era.json' });
    await source().probe();
    server.on('/2/users/by/username/X', { status: 404, json: { title: 'Not Found Error', status: 404 } });
    await rejectsWith(source().probe(), 'bad_response', /X_BASE_URL \(http:\/\/127\.0\.0\.1:\d+\) says @X does not exist: is it the X API\?/);
    server.on('/2/users/by/username/X', { status: 401, file: 'problem-401.json' });
    await rejectsWith(source().probe(), 'rejected', /check X_BEARER_TOKEN/);
  });

  it('unparseable or malformed answers are bad responses', async () => {
    server.on('/2/users/1', { text: '<html>oops</html>' });
    await rejectsWith(source().getUserById('1'), 'bad_response');
    server.on('/2/users/2', { json: { data: { id: 'not-a-number', username: 'a', created_at: '2020-01-01T00:00:00Z' } } });
    await rejectsWith(source().getUserById('2'), 'bad_response', /numeric id/);
    server.on('/2/users/3', { json: { data: { id: '3', username: 'a', created_at: 'yesterday' } } });
    await rejectsWith(source().getUserById('3'), 'bad_response', /timestamp/);
  });

  it('a refused connection is unavailable', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer();
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    await rejectsWith(source({ baseUrl: `http://127.0.0.1:${port}` }).getUserById('1'), 'unavailable', /could not be reached/);
  });

  it('a server that never answers: the resilience layer times out, and the request is aborted (the server sees the connection closed)', async () => {
    server.on('/2/users/999', { hang: true });
    const before = server.abandoned;
    const x = new ResilientSource(source(), { timeoutMs: 150, retry: { ...quickRetryPolicy, retries: 0 } });
    const started = Date.now();
    await rejectsWith(x.getUserById('999'), 'timeout', /150 ms/);
    assert.ok(Date.now() - started < 1_500);
    for (let i = 0; i < 50 && server.abandoned === before; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.abandoned, before + 1);
  });

  it("a caller's abort cancels the request and rejects with the caller's reason", async () => {
    server.on('/2/users/998', { hang: true });
    const before = server.abandoned;
    const ac = new AbortController();
    const pending = source().getUserById('998', { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('job stopping')), 50);
    await assert.rejects(pending, /job stopping/);
    for (let i = 0; i < 50 && server.abandoned === before; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.abandoned, before + 1);
  });
});

describe('XSource upstream rate limits', () => {
  it('after a 429, refuses to call the endpoint again before x-rate-limit-reset', async () => {
    const reset = T0 / 1000 + 900;
    server.on('/2/users/by/username/limited', {
      status: 429,
      file: 'problem-429.json',
      headers: { 'x-rate-limit-limit': '300', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(reset) },
    });
    server.on('/2/users/2244994945', { file: 'user-tweet-era.json' });
    const x = source();
    const first = await rejectsWith(x.getUserByUsername('limited'), 'rate_limited');
    assert.equal(first.resetAt?.getTime(), reset * 1000);
    assert.equal(server.count('/2/users/by/username/limited'), 1);

    clock = T0 + 60_000;
    const second = await rejectsWith(x.getUserByUsername('limited'), 'rate_limited');
    assert.equal(second.resetAt?.getTime(), reset * 1000);
    await rejectsWith(x.getUserByUsername('someone_else'), 'rate_limited'); // same endpoint template
    assert.equal(server.count('/2/users/by/username/limited'), 1); // X was not asked again
    assert.equal(server.count('/2/users/by/username/someone_else'), 0);

    await x.getUserById('2244994945'); // another endpoint has its own budget

    clock = reset * 1000 + 1;
    server.on('/2/users/by/username/limited', { file: 'user-tweet-era.json' });
    await x.getUserByUsername('limited');
    assert.equal(server.count('/2/users/by/username/limited'), 2);
  });

  it('stops at remaining 0, or waits for the reset when allowed to', async () => {
    const reset = T0 / 1000 + 30;
    server.on('/2/tweets/1850000000000000001', {
      file: 'tweet-long-note.json',
      headers: { 'x-rate-limit-limit': '15', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(reset) },
    });
    const countBefore = server.count('/2/tweets/1850000000000000001');
    const slept: number[] = [];
    const sleep = async (ms: number) => {
      slept.push(ms);
      clock += ms;
    };

    const strict = source({ sleep });
    await strict.getTweet('1850000000000000001');
    await rejectsWith(strict.getTweet('1850000000000000001'), 'rate_limited');
    assert.equal(server.count('/2/tweets/1850000000000000001'), countBefore + 1);

    const patient = source({ sleep, maxRateLimitWaitMs: 60_000 });
    await patient.getTweet('1850000000000000001');
    await patient.getTweet('1850000000000000001');
    assert.deepEqual(slept, [30_000]);
    assert.equal(server.count('/2/tweets/1850000000000000001'), countBefore + 3);
  });

  it('a 429 without rate-limit headers still blocks (60 s by default)', async () => {
    server.on('/2/communities/5', { status: 429, json: { title: 'Too Many Requests' } });
    const x = source();
    const err = await rejectsWith(x.getCommunity('5'), 'rate_limited');
    assert.equal(err.resetAt?.getTime(), T0 + 60_000);
    await rejectsWith(x.getCommunity('5'), 'rate_limited');
    assert.equal(server.count('/2/communities/5'), 1);
  });
});
