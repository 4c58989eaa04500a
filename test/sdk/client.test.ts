// SdgClient against the real gateway: every operation, lists paged to their end with filters, the
// credits on every result, and the typed errors.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  AuthenticationError,
  InsufficientCreditsError,
  InvalidRequestError,
  isApiError,
  NotFoundError,
  ProtectedAccountError,
  SdgApiError,
  SdgClient,
  operationMethods,
  type Tweet,
} from '../../sdk/src/index.js';
import type { TestAccount } from '../helpers/harness.js';
import { startGateway, WALLET, type Gateway } from './gateway.js';

describe('SdgClient', () => {
  let g: Gateway;
  let a: TestAccount;
  let client: SdgClient;
  before(async () => {
    g = await startGateway();
    a = await g.account({ credits: 1_000_000 });
    client = new SdgClient({ apiKey: a.apiKey, baseUrl: g.url });
  });
  after(() => g.close());

  test('a method for every operation of the served document, and nothing else', async () => {
    const doc = (await (await fetch(`${g.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
    const served = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId)).sort();
    assert.deepEqual(Object.keys(operationMethods).sort(), served);
    for (const m of Object.values(operationMethods)) assert.equal(typeof client[m], 'function', m);
  });

  test("a user's timeline paged to its end with filters: every tweet in the window once, newest first, each page charged", async () => {
    const userId = g.sample.userIds[0]!;
    const end = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    const start = new Date(end.getTime() - 24 * 3_600_000);
    const list = client.userTweets(userId, { startTime: start.toISOString(), endTime: end.toISOString(), limit: 7 });
    const tweets: Tweet[] = [];
    for await (const t of list) tweets.push(t);
    assert.ok(tweets.length >= 24, `an active account tweets every hour; got ${tweets.length}`);
    const full = Math.ceil(tweets.length / 7);
    assert.ok(list.pages === full || list.pages === full + 1, `${list.pages} pages of 7 for ${tweets.length} tweets`);
    assert.equal(new Set(tweets.map((t) => t.id)).size, tweets.length, 'no tweet twice');
    for (const t of tweets) {
      assert.equal(t.authorId, userId);
      const at = Date.parse(t.createdAt);
      assert.ok(at >= start.getTime() && at < end.getTime(), `${t.createdAt} in the window`);
    }
    for (let i = 1; i < tweets.length; i++) assert.ok(tweets[i - 1]!.createdAt >= tweets[i]!.createdAt, 'newest first');
    assert.equal(list.creditsCharged, 100 * list.pages);
    assert.equal(list.creditsRemaining, 1_000_000 - list.creditsCharged);
    assert.equal(list.nextCursor, null);

    // The same window without a page size: pages of 100, one page for a day of hourly tweets.
    const again = client.userTweets(userId, { startTime: start.toISOString(), endTime: end.toISOString() });
    assert.deepEqual((await again.toArray()).map((t) => t.id), tweets.map((t) => t.id));
    assert.equal(again.pages, 1);

    // sinceId / untilId: strictly between two ids of the window.
    const ids = tweets.map((t) => t.id);
    const mid = await client.userTweets(userId, { sinceId: ids[ids.length - 1], untilId: ids[0] }).toArray();
    assert.deepEqual(mid.map((t) => t.id), ids.slice(1, -1));

    // A kept nextCursor resumes where a run stopped, with the filters it was issued with.
    const firstPage = client.userTweets(userId, { startTime: start.toISOString(), endTime: end.toISOString(), limit: 7 });
    for await (const page of firstPage.byPage()) {
      assert.equal(page.data.items.length, 7);
      break;
    }
    const rest = await client.userTweets(userId, { startTime: start.toISOString(), endTime: end.toISOString(), limit: 7, cursor: firstPage.nextCursor! }).toArray();
    assert.deepEqual(rest.map((t) => t.id), tweets.slice(7).map((t) => t.id));

    // A maxItems that is not a whole number ≥ 0 is refused where it is given, naming it (not the gateway's "limit must be integer").
    for (const bad of [1.5, Number.NaN, -1]) assert.throws(() => client.userTweets(userId, { maxItems: bad }), /maxItems must be a whole number of at least 0; got/);
    // maxItems stops early, and the first page of 100 is the only one fetched.
    const few = client.userTweets(userId, { maxItems: 3 });
    assert.equal((await few.toArray()).length, 3);
    assert.equal(few.pages, 1);

    // A run stopped by maxItems ends on a page boundary: its last page asks for only what is still
    // wanted, so its nextCursor resumes right after the last item (before, pages of 7 for 10 items
    // bought 14, gave 10, and the cursor went on after the 14th: 4 tweets lost).
    const window = { startTime: start.toISOString(), endTime: end.toISOString(), limit: 7 };
    const ten = client.userTweets(userId, { ...window, maxItems: 10 });
    const firstTen = await ten.toArray();
    assert.deepEqual(firstTen.map((t) => t.id), ids.slice(0, 10));
    assert.equal(ten.pages, 2);
    const resumed = await client.userTweets(userId, { ...window, cursor: ten.nextCursor! }).toArray();
    assert.deepEqual(resumed.map((t) => t.id), ids.slice(10), 'nothing skipped, nothing twice');
    // byPage() keeps to maxItems too: one page of 5, not the whole list.
    const paged = client.userTweets(userId, { ...window, limit: 5, maxItems: 5 });
    let pages = 0;
    for await (const page of paged.byPage()) pages += page.data.items.length > 0 ? 1 : 0;
    assert.equal(pages, 1);
    assert.equal(paged.creditsCharged, 100);
    // exactOptionalPropertyTypes: an option given as undefined is as if not given.
    const unset = client.userTweets(userId, { ...window, cursor: undefined, maxItems: undefined });
    assert.equal((await unset.toArray()).length, ids.length);
  });

  test('retweeters paged to the end; single records; credits charged and remaining on every result', async () => {
    const tweetId = g.sample.tweetIds[0]!;
    const list = client.retweeters(tweetId, { limit: 2 });
    const profiles = await list.toArray();
    assert.ok(profiles.length >= 1);
    assert.equal(new Set(profiles.map((p) => p.id)).size, profiles.length);
    assert.equal(list.creditsCharged, 100 * list.pages);

    const before = (await client.balance()).data.balance;
    const profile = await client.userByUsername(g.sample.usernames[0]!);
    assert.equal(profile.data.id, g.sample.userIds[0]);
    assert.deepEqual(profile.credits, { charged: 100, remaining: before - 100 });
    assert.match(profile.requestId ?? '', /\S/);
    assert.ok(profile.rateLimit && profile.rateLimit.limit > 0);

    const tweet = await client.tweet(tweetId);
    assert.equal(tweet.data.id, tweetId);
    assert.deepEqual(tweet.credits, { charged: 100, remaining: before - 200 });
    const community = await client.community(g.sample.communityIds[0]!);
    assert.equal(community.data.id, g.sample.communityIds[0]);
    const wallet = await client.walletBalance(WALLET);
    assert.equal(wallet.data.formatted, '1.5');
    assert.equal(wallet.credits?.charged, 100);
    const hello = await client.hello();
    assert.equal(hello.data.accountId, a.accountId);
    assert.deepEqual(hello.credits, { charged: 0, remaining: before - 400 });
    assert.equal((await client.balance()).data.balance, before - 400);
  });

  test('account: the account, plans, keys created, listed and revoked, the usage ledger to its end and summed', async () => {
    const me = await client.account();
    assert.equal(me.data.id, a.accountId);
    assert.equal(me.data.balance, (await client.balance()).data.balance);
    const to = new Date(Date.now() + 60_000).toISOString();
    const summary = await client.usageSummary({ from: new Date(Date.now() - 3_600_000).toISOString(), to, granularity: 'hour' });
    const charged = (await client.usage().toArray()).filter((e) => e.kind === 'charge');
    assert.equal(summary.data.credits, -charged.reduce((n, e) => n + e.amount, 0));
    assert.equal(summary.data.calls, charged.length);
    const plans = await client.plans();
    assert.ok(plans.data.plans.length >= 1);
    const created = await client.createKey({ name: 'sdk-test' });
    assert.match(created.data.key ?? '', /\S{20,}/);
    const other = new SdgClient({ apiKey: created.data.key!, baseUrl: g.url });
    assert.equal((await other.hello()).data.accountId, a.accountId);
    const keys = client.keys({ limit: 1 });
    assert.ok((await keys.toArray()).some((k) => k.id === created.data.id && k.revokedAt === null));
    assert.ok(keys.pages >= 2, 'paged to the end');
    const revoked = await client.revokeKey(created.data.id);
    assert.ok(revoked.data.revokedAt);
    await assert.rejects(other.hello(), AuthenticationError);

    const ledger = client.usage({ limit: 2 });
    const entries = await ledger.toArray();
    assert.ok(ledger.pages >= 2);
    assert.equal(entries.at(-1)!.kind, 'grant');
    assert.equal(entries[0]!.balanceAfter, (await client.balance()).data.balance);
    assert.equal(ledger.creditsCharged, 0);
  });

  test('bulk export: watchlist batches, the watchlist, the crawl, exports listed, latest and by id', async () => {
    const added = await client.addAllToWatchlist(
      [{ username: g.sample.usernames[1]! }, { socialUserId: g.sample.userIds[2]! }, { username: 'no_such_user_zz' }],
      { batchSize: 2, intervalMs: 20 },
    );
    assert.equal(added.batches.length, 2);
    assert.deepEqual(added.counts, { added: 2, not_found: 1 });
    const watched = await client.watchlist({ limit: 1 }).toArray();
    assert.deepEqual(new Set(watched.map((w) => w.socialUserId)), new Set([g.sample.userIds[1], g.sample.userIds[2]]));

    const removing = await client.removeFromWatchlist([g.sample.userIds[2]!]);
    const removed = await client.waitForBatch(removing.data.batchId, { intervalMs: 20 });
    assert.equal(removed.items[0]!.status, 'removed');
    assert.equal((await client.batch(removing.data.batchId)).data.status, 'completed');
    assert.deepEqual((await client.watchlist().toArray()).map((w) => w.socialUserId), [g.sample.userIds[1]]);

    const crawl = await client.crawlStatus();
    assert.ok(crawl.data.schedule.intervalHours > 0);

    await assert.rejects(client.latestExport(), NotFoundError);
    const end = new Date();
    const start = new Date(end.getTime() - 3_600_000);
    const states: string[] = [];
    const queued = await client.generateExport({ startDate: start.toISOString(), endDate: end.toISOString() });
    assert.equal(queued.status, 202);
    const done = await client.waitForExport(queued.data.id, { intervalMs: 20, onProgress: (r) => states.push(r.status) });
    assert.equal(done.status, 'completed');
    assert.equal(states.at(-1), 'completed');
    assert.equal((await client.getExport(queued.data.id)).data.sha256, done.sha256);
    assert.equal((await client.latestExport()).data.id, queued.data.id);
    assert.deepEqual((await client.exports({ limit: 1 }).toArray()).map((e) => e.id), [queued.data.id]);
    const link = await client.exportDownload(queued.data.id);
    assert.equal(link.data.sha256, done.sha256);
    assert.ok(link.data.url.startsWith(g.url));
  });

  test('typed errors by code: 401, 402 with required and balance, 403, 404, 400; nothing charged', async () => {
    await assert.rejects(new SdgClient({ apiKey: 'sdg_nope', baseUrl: g.url }).balance(), (e: unknown) => {
      assert.ok(e instanceof AuthenticationError);
      assert.equal(e.code, 'invalid_api_key');
      assert.equal(e.status, 401);
      assert.match(e.requestId ?? '', /\S/);
      return true;
    });
    const poor = await g.account({ credits: 150 });
    const poorClient = new SdgClient({ apiKey: poor.apiKey, baseUrl: g.url });
    await poorClient.tweet(g.sample.tweetIds[0]!);
    await assert.rejects(poorClient.tweet(g.sample.tweetIds[0]!), (e: unknown) => {
      assert.ok(e instanceof InsufficientCreditsError);
      assert.equal(e.code, 'insufficient_credits');
      assert.equal(e.required, 100);
      assert.equal(e.balance, 50);
      assert.equal(e.available, 50);
      return true;
    });
    // By code: narrowed to the class, its fields typed (this file is type-checked); a misspelt code does not compile.
    await assert.rejects(poorClient.tweet(g.sample.tweetIds[0]!), (e: unknown) => {
      assert.ok(isApiError(e, 'insufficient_credits'));
      const required: number | undefined = e.required;
      assert.equal(required, 100);
      assert.equal(isApiError(e, 'rate_limited'), false);
      // @ts-expect-error: no such code
      assert.equal(isApiError(e, 'insuficient_credits'), false);
      return true;
    });
    assert.equal((await poorClient.balance()).data.balance, 50);
    await assert.rejects(client.userTweets(g.sample.protectedUserIds[0]!).toArray(), (e: unknown) => e instanceof ProtectedAccountError && e.code === 'protected_account');
    await assert.rejects(client.getExport('123'), (e: unknown) => e instanceof NotFoundError && e.code === 'not_found');
    // The error names the URL it came from (what an uncaught error prints), never the key.
    await assert.rejects(client.userByUsername('no_such_user_zz'), (e: unknown) => e instanceof NotFoundError && e.url === `${g.url}/social/v1/users/by/username/no_such_user_zz`);
    // Without the query: a cursor here, a download link's signature elsewhere.
    await assert.rejects(client.usagePage({ cursor: 'not-a-cursor' }), (e: unknown) => e instanceof SdgApiError && e.code === 'invalid_cursor' && e.url === `${g.url}/api/v1/usage`);
    await assert.rejects(client.userTweets(g.sample.userIds[0]!, { startTime: 'yesterday' }).toArray(), (e: unknown) => {
      assert.ok(e instanceof InvalidRequestError);
      assert.equal(e.code, 'invalid_request');
      assert.ok(e.details, 'details name the field');
      return true;
    });
    await assert.rejects(client.generateExport({ startDate: '2025-01-02T00:00:00Z', endDate: '2025-01-01T00:00:00Z' }), (e: unknown) => e instanceof InvalidRequestError && e.code === 'invalid_date_range');
  });
});
