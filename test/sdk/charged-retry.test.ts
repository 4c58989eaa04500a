// Charged calls are not paid twice: a GET whose answer was lost after the gateway gave it (or that got
// none in time) is not sent again unless the caller opts in (retry.retryCharged), and the error says
// it may have been charged; what proves nothing was charged (a refused connection, a 503) is still
// retried, and so is a free call whatever happened to it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { NetworkError, SdgClient, UnavailableError, type RetryEvent } from '../../sdk/src/index.js';
import { closedPort, LosingProxy, silentServer } from './faults.js';
import { startGateway, type Gateway } from './gateway.js';

describe('charged calls after a lost answer', () => {
  let g: Gateway;
  let proxy: LosingProxy;
  before(async () => {
    g = await startGateway();
    proxy = await new LosingProxy(Number(new URL(g.url).port)).start();
  });
  after(async () => {
    await proxy.close();
    await g.close();
  });

  const balanceOf = async (apiKey: string) => (await new SdgClient({ apiKey, baseUrl: g.url }).balance()).data.balance;

  test('a charged GET whose answer is lost is not sent again: charged once, and the error says it may have been', async () => {
    const a = await g.account({ credits: 1_000 });
    const retries: RetryEvent[] = [];
    const client = new SdgClient({ apiKey: a.apiKey, baseUrl: proxy.url, retry: { baseDelayMs: 5 }, onRetry: (e) => retries.push(e) });
    proxy.requests.length = 0;
    proxy.drop = (head) => head.startsWith('GET /social/v1/tweets/');
    proxy.lose = 1;
    await assert.rejects(client.tweet(g.sample.tweetIds[0]!), (e: unknown) => {
      assert.ok(e instanceof NetworkError, String(e));
      assert.equal(e.maybeCharged, true);
      assert.match(e.message, /may have reached the gateway and been charged, so it was not sent again \(retry\.retryCharged/);
      return true;
    });
    assert.equal(retries.length, 0);
    assert.equal(proxy.count(/^GET \/social\/v1\/tweets\//), 1, 'sent once');
    assert.equal(await balanceOf(a.apiKey), 900, 'charged once');
  });

  test('a list whose second page is lost stops there: no page bought twice, and the count is what was answered', async () => {
    const a = await g.account({ credits: 10_000 });
    const client = new SdgClient({ apiKey: a.apiKey, baseUrl: proxy.url, retry: { baseDelayMs: 5 } });
    let pages = 0;
    proxy.drop = (head) => head.startsWith('GET /social/v1/users/') && ++pages === 2;
    proxy.lose = 1;
    const list = client.userTweets(g.sample.userIds[0]!, { limit: 5 });
    await assert.rejects(list.toArray(), (e: unknown) => e instanceof NetworkError && e.maybeCharged);
    assert.equal(list.pages, 1);
    assert.equal(list.creditsCharged, 100);
    // Page 1 and the lost page 2: 200, not 300 (page 2 bought again) as before.
    assert.equal(await balanceOf(a.apiKey), 9_800);
  });

  test('retry.retryCharged: true sends it again, and pays twice, as documented', async () => {
    const a = await g.account({ credits: 1_000 });
    const client = new SdgClient({ apiKey: a.apiKey, baseUrl: proxy.url, retry: { baseDelayMs: 5, retryCharged: true } });
    proxy.drop = (head) => head.startsWith('GET /social/v1/tweets/');
    proxy.lose = 1;
    const r = await client.tweet(g.sample.tweetIds[0]!);
    assert.deepEqual(r.credits, { charged: 100, remaining: 800 });
  });

  test('a free GET and a POST whose answers are lost are sent again: nothing is paid twice', async () => {
    const a = await g.account({ credits: 1_000 });
    const client = new SdgClient({ apiKey: a.apiKey, baseUrl: proxy.url, retry: { baseDelayMs: 5 } });
    proxy.drop = (head) => head.startsWith('GET /api/v1/credits/balance');
    proxy.lose = 1;
    assert.equal((await client.balance()).data.balance, 1_000);
    proxy.drop = (head) => head.startsWith('POST /social/v1/bulk-export/watchlist/batch');
    proxy.lose = 1;
    const batch = await client.addToWatchlist([{ username: g.sample.usernames[0]! }]);
    assert.equal(batch.replayed, true);
  });

  test('a refused connection proves nothing was sent: a charged GET is retried', async () => {
    const a = await g.account({ credits: 1_000 });
    const closed = await closedPort();
    let first = true;
    // The first attempt goes to a port nothing listens on: connect ECONNREFUSED, a real one.
    const refusedOnce: typeof fetch = async (input, init) => {
      const url = new Request(input, init).url;
      if (!first) return fetch(input, init);
      first = false;
      return fetch(url.replace(/:\d+\//, `:${closed}/`), init);
    };
    const retries: RetryEvent[] = [];
    const client = new SdgClient({ apiKey: a.apiKey, baseUrl: g.url, fetch: refusedOnce, retry: { baseDelayMs: 5 }, onRetry: (e) => retries.push(e) });
    const r = await client.tweet(g.sample.tweetIds[0]!);
    assert.equal(retries.length, 1);
    assert.deepEqual(r.credits, { charged: 100, remaining: 900 });
    // With no retries left, it says it never left.
    const none = new SdgClient({ apiKey: a.apiKey, baseUrl: `http://127.0.0.1:${closed}`, retry: { maxRetries: 0 } });
    await assert.rejects(none.tweet('1'), (e: unknown) => e instanceof NetworkError && !e.maybeCharged && !e.timedOut);
  });

  test('a 503 saying the call may have been charged is not sent again (a charged GET); other 503s are retried', async () => {
    const sent: string[] = [];
    const answers = (maybeCharged: boolean): typeof fetch => async (input, init) => {
      sent.push(new Request(input, init).url);
      const body = { error: { code: 'service_unavailable', message: 'storage lost', details: maybeCharged ? { maybeCharged: true } : null }, meta: { requestId: 'req_x' } };
      return new Response(JSON.stringify(body), { status: 503, headers: { 'content-type': 'application/json', 'retry-after': '0' } });
    };
    const lost = new SdgClient({ apiKey: 'sdg_test', baseUrl: 'http://127.0.0.1:9', fetch: answers(true), retry: { maxRetries: 3, baseDelayMs: 1 } });
    await assert.rejects(lost.tweet('1'), (e: unknown) => e instanceof UnavailableError && e.details?.maybeCharged === true);
    assert.equal(sent.length, 1, 'not sent again');
    sent.length = 0;
    const plain = new SdgClient({ apiKey: 'sdg_test', baseUrl: 'http://127.0.0.1:9', fetch: answers(false), retry: { maxRetries: 3, baseDelayMs: 1 } });
    await assert.rejects(plain.tweet('1'), (e: unknown) => e instanceof UnavailableError);
    assert.equal(sent.length, 4, 'an ordinary 503 charged nothing: retried');
  });

  test('no answer within timeoutMs: a charged GET is given up once, a free one retried', async () => {
    const silent = await silentServer();
    try {
      const client = new SdgClient({ apiKey: 'sdg_test', baseUrl: silent.url, timeoutMs: 100, retry: { maxRetries: 2, baseDelayMs: 1 } });
      await assert.rejects(client.tweet('1'), (e: unknown) => e instanceof NetworkError && e.timedOut && e.maybeCharged && /no answer within 100 ms/.test(e.message));
      assert.equal(silent.heads.length, 1, 'not sent again');
      silent.heads.length = 0;
      await assert.rejects(client.balance(), (e: unknown) => e instanceof NetworkError && e.timedOut && !e.maybeCharged);
      assert.equal(silent.heads.length, 3);
    } finally {
      await silent.close();
    }
  });
});
