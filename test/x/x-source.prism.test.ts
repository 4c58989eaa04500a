// XSource against Prism mocking the X API v2 OpenAPI document (docs/upstream, version 2.167).
//
// What this proves:
//  1. Our requests match the document: Prism validates path patterns, query parameter names'
//     enums (post.fields, user.fields, expansions, media.fields, community.fields), max_results
//     bounds, date-time formats and the bearer security scheme, and answers 422/401 with an
//     `sl-violations` header otherwise. A negative control shows the check has teeth.
//  2. Whatever the document allows X to send, we either return objects that validate against the
//     TypeBox models or fail with a SourceError: Prism's static examples (every field present,
//     counters at -2^53, ids "string") and dynamic ones (random strings, nulls, extra properties).
//     The document types ids as free strings, where X sends decimal ids: raw, we reject those as
//     bad_response; to exercise the rest of the mapping we rewrite only the top-level ids (and a
//     community's created_at, also a free string in the document) into what X sends.
//  3. Forced 400, 401, 403, 404, 429 and 500 answers (Prefer: code=…) become the right SourceError
//     kinds (401/403/400 'rejected', never retried), and a 429 stops further calls to that endpoint.
//  4. The readiness probe's request is one the document knows.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Community, SocialProfile, Tweet } from '../../src/domain/models.js';
import { SourceError, type DataSource } from '../../src/sources/types.js';
import { XSource, type XSourceOptions } from '../../src/sources/x/x-source.js';
import { assertSchema, TOKEN } from './helpers.js';
import { startPrism, type RunningPrism } from './prism.js';

let prism: RunningPrism;

before(
  async () => {
    prism = await startPrism(60_000);
  },
  { timeout: 90_000 },
);
after(async () => {
  await prism?.stop();
});

interface Exchange {
  path: string;
  query: URLSearchParams;
  status: number;
  violations: string | null;
}

type Rewrite = (body: unknown) => unknown;

/** A fetch that records what Prism said, sends a Prefer header, and may rewrite the JSON body. */
function recordingFetch(exchanges: Exchange[], prefer?: string, rewrite?: Rewrite): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    if (prefer) headers.set('prefer', prefer);
    const response = await fetch(input, { ...init, headers });
    const url = new URL(input instanceof Request ? input.url : String(input));
    exchanges.push({ path: url.pathname, query: url.searchParams, status: response.status, violations: response.headers.get('sl-violations') });
    if (!rewrite || !response.ok) return response;
    const body = rewrite((await response.json()) as unknown);
    const copied = new Headers(response.headers);
    copied.delete('content-length');
    return new Response(JSON.stringify(body), { status: response.status, headers: copied });
  };
}

function source(exchanges: Exchange[], prefer?: string, rewrite?: Rewrite, extra: Partial<XSourceOptions> = {}): XSource {
  return new XSource({ bearerToken: TOKEN, baseUrl: prism.baseUrl, fetch: recordingFetch(exchanges, prefer, rewrite), ...extra });
}

let nextId = 1_000;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** X's ids are decimal; Prism's are lorem ipsum. Rewrites `data`'s own ids (and created_at when unparseable). */
const decimalIds: Rewrite = (body) => {
  if (!isRecord(body)) return body;
  const fix = (item: unknown) => {
    if (!isRecord(item)) return;
    item.id = String((nextId += 1));
    if (typeof item.created_at === 'string' && !Number.isFinite(Date.parse(item.created_at))) item.created_at = '2021-12-16T20:18:43.000Z';
  };
  if (Array.isArray(body.data)) body.data.forEach(fix);
  else fix(body.data);
  return body;
};

const USER_ID = '2244994945';
const TWEET_ID = '1850000000000000001';
const COMMUNITY_ID = '1471580197908586507';

/** Every DataSource method with realistic arguments, including every timeline parameter. */
function calls(x: DataSource): Array<[string, () => Promise<unknown>]> {
  return [
    ['getUserByUsername', () => x.getUserByUsername('XDevelopers')],
    ['getUserById', () => x.getUserById(USER_ID)],
    ['getTweet', () => x.getTweet(TWEET_ID)],
    ['getRetweeters', () => x.getRetweeters(TWEET_ID, { limit: 3 })],
    ['getRetweeters (page 2)', () => x.getRetweeters(TWEET_ID, { limit: 100, after: '7140dibdnow9c7btw3z2vwioavpvutgzrzm9icis4ndix' })],
    ['getUserTweets', () => x.getUserTweets(USER_ID, { limit: 2 })],
    [
      'getUserTweets (all parameters)',
      () =>
        x.getUserTweets(USER_ID, {
          limit: 50,
          after: '7140dibdnow9c7btw423x1sx2hq0c0kcdfgm5c2zfjtc4',
          sinceId: '1800000000000000000',
          startTime: new Date('2024-11-01T00:00:00.500Z'),
          endTime: new Date('2024-12-01T00:00:00Z'),
        }),
    ],
    ['getUserTweets (until_id cursor)', () => x.getUserTweets(USER_ID, { limit: 5, after: 'until_id:1870000000000000005' })],
    ['getCommunity', () => x.getCommunity(COMMUNITY_ID)],
  ];
}

/** Checks a method's result against the model it returns. */
function checkShape(label: string, result: unknown): void {
  const name = label.replace(/ \(round \d+\)$/, '');
  if (name.startsWith('getUserBy')) return assertSchema(SocialProfile, result, name);
  if (name === 'getTweet') return assertSchema(Tweet, result, name);
  if (name === 'getCommunity') return assertSchema(Community, result, name);
  assert.ok(isRecord(result) && Array.isArray(result.items), `${name} returns a page`);
  assert.ok(result.next === undefined || typeof result.next === 'string', `${name}: next`);
  for (const item of result.items) {
    if (name.startsWith('getRetweeters')) {
      assert.ok(isRecord(item));
      assertSchema(SocialProfile, item.user, `${label} user`);
      assert.equal(item.retweetedAt, null);
    } else {
      assertSchema(Tweet, item, label);
    }
  }
}

function assertConforming(exchanges: Exchange[]): void {
  assert.ok(exchanges.length > 0);
  for (const e of exchanges) {
    assert.equal(e.violations, null, `Prism found our request to ${e.path}?${e.query} invalid: ${e.violations}`);
    assert.equal(e.status, 200, `${e.path} answered ${e.status}`);
  }
}

describe('XSource against Prism: requests match the OpenAPI document', () => {
  it('every method and parameter is accepted (static and dynamic mocks)', async () => {
    for (const prefer of [undefined, 'dynamic=true']) {
      const exchanges: Exchange[] = [];
      const x = source(exchanges, prefer, decimalIds);
      for (const [, call] of calls(x)) await call();
      assertConforming(exchanges);
      assert.equal(exchanges.length, calls(x).length);
    }
  });

  it('sends what we think we send', async () => {
    const exchanges: Exchange[] = [];
    const x = source(exchanges, undefined, decimalIds);
    await x.getUserTweets(USER_ID, { limit: 2, startTime: new Date('2024-11-01T00:00:00.500Z') });
    const query = exchanges[0]?.query;
    assert.equal(query?.get('max_results'), '5'); // the document's minimum, trimmed to 2 for the caller
    assert.equal(query?.get('start_time'), '2024-11-01T00:00:01Z');
    assert.ok(query?.get('post.fields')?.includes('note_post'));
  });

  it('negative control: tweet-era names that the document lacks are caught by Prism', async () => {
    const exchanges: Exchange[] = [];
    const x = source(exchanges, undefined, decimalIds, { dialect: 'tweets' });
    // Prism answers a 422 of its own (X would answer a 400, see dialect.test.ts): refused, no switch.
    await assert.rejects(x.getUserById(USER_ID), (err: unknown) => err instanceof SourceError && err.kind === 'rejected');
    assert.equal(exchanges[0]?.status, 422);
    assert.match(exchanges[0]?.violations ?? '', /user\.fields/); // pinned_tweet_id is not in the 2.167 enum
  });
});

describe('XSource against Prism: shapes', () => {
  it('static examples: ids "string" are refused as bad_response, never passed on', async () => {
    const exchanges: Exchange[] = [];
    for (const [name, call] of calls(source(exchanges))) {
      await assert.rejects(call(), (err: unknown) => {
        assert.ok(err instanceof SourceError, `${name}: ${String(err)}`);
        assert.equal(err.kind, 'bad_response', `${name}: ${err.message}`);
        assert.match(err.message, /not a numeric id/);
        return true;
      });
    }
    assertConforming(exchanges);
  });

  it('static examples with decimal ids: every method validates; negative counters become 0', async () => {
    const exchanges: Exchange[] = [];
    const x = source(exchanges, undefined, decimalIds);
    for (const [name, call] of calls(x)) checkShape(name, await call());

    // Prism's static example has every field, counters at -9007199254740991, unknown enum values,
    // and errors[] beside data (data wins).
    const user = await x.getUserById(USER_ID);
    assert.deepEqual(user.metrics, { followers: 0, following: 0, tweets: 0, listed: 0, likes: 0, media: 0 });
    assert.equal(user.verifiedType, 'blue'); // verified_type "string", verified true
    assert.deepEqual(user.pinnedTweetIds, ['string']);
    const tweet = await x.getTweet(TWEET_ID);
    assert.equal(tweet.text, 'string'); // note_post.text
    assert.equal(tweet.retweetedTweetId, 'string'); // referenced_posts: [{ type: retweeted }]
    assert.deepEqual(tweet.media, []); // media type "string" is not one we know
    assert.equal(tweet.url, `https://x.com/string/status/${tweet.id}`); // includes.users[].username is "string"
    const community = await x.getCommunity(COMMUNITY_ID);
    assert.equal(community.access, 'public');
    assert.equal(community.joinPolicy, 'restricted');
    assertConforming(exchanges);
  });

  it('dynamic examples (random values, nulls, extra properties): every method validates, 8 rounds', async () => {
    const exchanges: Exchange[] = [];
    const x = source(exchanges, 'dynamic=true', decimalIds);
    for (let round = 0; round < 8; round += 1) {
      for (const [name, call] of calls(x)) checkShape(`${name} (round ${round})`, await call());
    }
    assertConforming(exchanges);
  });
});

describe('XSource against Prism: forced failures', () => {
  const methods = (x: XSource) => calls(x).filter(([name]) => !name.includes('('));

  it('404 → not_found for every method', async () => {
    const exchanges: Exchange[] = [];
    for (const [name, call] of methods(source(exchanges, 'code=404'))) {
      await assert.rejects(call(), (err: unknown) => err instanceof SourceError && err.kind === 'not_found', name);
    }
    assert.ok(exchanges.every((e) => e.status === 404));
  });

  it('401 and 403 → rejected, naming X_BEARER_TOKEN, without the token; 500 → unavailable', async () => {
    for (const [code, kind, message] of [
      [401, 'rejected', /^X rejected the bearer token \(HTTP 401\): check X_BEARER_TOKEN$/],
      [403, 'rejected', /HTTP 403.*check X_BEARER_TOKEN/],
      [500, 'unavailable', /HTTP 500/],
    ] as const) {
      const exchanges: Exchange[] = [];
      await assert.rejects(source(exchanges, `code=${code}`).getUserById(USER_ID), (err: unknown) => {
        assert.ok(err instanceof SourceError && err.kind === kind, String(err));
        assert.match(err.message, message);
        assert.ok(!err.message.includes(TOKEN));
        assert.equal(err.upstream?.status, code);
        return true;
      });
      assert.equal(exchanges.length, 1);
      assert.equal(exchanges[0]?.status, code);
    }
  });

  it('a 400 that names no field parameter → rejected, and the vocabulary stays', async () => {
    const exchanges: Exchange[] = [];
    const x = source(exchanges, 'code=400');
    await assert.rejects(x.getTweet(TWEET_ID), (err: unknown) => err instanceof SourceError && err.kind === 'rejected' && /HTTP 400/.test(err.message));
    assert.equal(exchanges.length, 1);
    assert.equal(x.dialect, 'posts');
  });

  it('429 → rate_limited, and the endpoint is not called again before the reset', async () => {
    const exchanges: Exchange[] = [];
    let now = Date.now();
    const x = source(exchanges, 'code=429', undefined, { now: () => now });
    for (let i = 0; i < 3; i += 1) {
      await assert.rejects(x.getUserTweets(USER_ID, { limit: 10 }), (err: unknown) => {
        assert.ok(err instanceof SourceError && err.kind === 'rate_limited', String(err));
        assert.ok(err.resetAt && err.resetAt.getTime() > now, 'resetAt in the future');
        return true;
      });
    }
    assert.equal(exchanges.length, 1); // Prism sends no x-rate-limit-reset: we hold off 60 s
    now += 60_001;
    await assert.rejects(x.getUserTweets(USER_ID, { limit: 10 }), (err: unknown) => err instanceof SourceError && err.kind === 'rate_limited');
    assert.equal(exchanges.length, 2);
  });
});

describe('XSource against Prism: the readiness probe', () => {
  it('asks for a user by username, as the document allows; a forced 401 fails it naming X_BEARER_TOKEN', async () => {
    const exchanges: Exchange[] = [];
    await source(exchanges).probe();
    assertConforming(exchanges);
    assert.equal(exchanges[0]?.path, '/2/users/by/username/X');
    await assert.rejects(source([], 'code=401').probe(), /check X_BEARER_TOKEN/);
  });
});
