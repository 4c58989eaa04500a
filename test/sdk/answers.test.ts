// Answers the SDK must not take for what they are not, from a stub gateway: every 5xx availability
// answer one class (UnavailableError), a 2xx that cannot be read (not JSON, no data, a body that
// stalls) an UnreadableAnswerError that says the call went through, and details that are missing
// left undefined rather than NaN.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  InsufficientCreditsError,
  NetworkError,
  RateLimitedError,
  SdgApiError,
  SdgClient,
  ServiceUnavailableError,
  UnavailableError,
  UnreadableAnswerError,
  UpstreamError,
} from '../../sdk/src/index.js';
import { envelope, stub } from './faults.js';

describe('answers that are not what they seem', () => {
  let s: Awaited<ReturnType<typeof stub>>;
  /** What the stub answers next, by path. */
  const routes = new Map<string, (res: import('node:http').ServerResponse) => void>();
  let hits = 0;
  before(async () => {
    s = await stub((req, res) => {
      hits++;
      const route = routes.get(new URL(req.url!, 'http://x').pathname);
      if (route) return route(res);
      envelope(res, 404, 'not_found', 'no such route');
    });
  });
  after(() => s.close());
  const client = (o: { timeoutMs?: number; maxRetries?: number } = {}) => new SdgClient({ apiKey: 'sdg_test', baseUrl: s.url, timeoutMs: o.timeoutMs ?? 2_000, retry: { maxRetries: o.maxRetries ?? 0, baseDelayMs: 1 } });

  test('5xx: service_unavailable, upstream_* and an unknown code are all UnavailableError, with retryAfterSeconds', async () => {
    routes.set('/api/v1/credits/balance', (res) => envelope(res, 503, 'service_unavailable', 'storage down', undefined, { 'retry-after': '1' }));
    await assert.rejects(client().balance(), (e: unknown) => e instanceof ServiceUnavailableError && e instanceof UnavailableError && e.retryAfterSeconds === 1);
    routes.set('/api/v1/credits/balance', (res) => envelope(res, 503, 'upstream_unavailable', 'source down', { retryAfterSeconds: 7 }));
    await assert.rejects(client().balance(), (e: unknown) => e instanceof UpstreamError && e instanceof UnavailableError && e.retryAfterSeconds === 7);
    // A code this SDK does not know is not said to be the data source's.
    routes.set('/api/v1/credits/balance', (res) => envelope(res, 503, 'brand_new_code', 'new'));
    await assert.rejects(client().balance(), (e: unknown) => e instanceof UnavailableError && !(e instanceof UpstreamError) && e.code === 'brand_new_code');
    // A proxy's 502 page without an envelope.
    routes.set('/api/v1/credits/balance', (res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>'));
    await assert.rejects(client().balance(), (e: unknown) => e instanceof UnavailableError && e.code === 'http_502');
    // internal_error is a fault, not unavailability.
    routes.set('/api/v1/credits/balance', (res) => envelope(res, 500, 'internal_error', 'bug'));
    await assert.rejects(client().balance(), (e: unknown) => e instanceof SdgApiError && !(e instanceof UnavailableError));
  });

  test('a 2xx that is not JSON is an UnreadableAnswerError that says what it cost, not a NetworkError', async () => {
    routes.set('/social/v1/tweets/1', (res) => res.writeHead(200, { 'content-type': 'text/html', 'x-credits-charged': '100', 'x-credits-remaining': '900', 'x-request-id': 'req_1' }).end('<html>'));
    await assert.rejects(client({ maxRetries: 3 }).tweet('1'), (e: unknown) => {
      assert.ok(e instanceof UnreadableAnswerError, String(e));
      assert.ok(!(e instanceof NetworkError));
      assert.equal(e.status, 200);
      assert.equal(e.requestId, 'req_1');
      assert.deepEqual(e.credits, { charged: 100, remaining: 900 });
      assert.match(e.message, /not JSON \(text\/html\); the call went through: 100 credits charged/);
      return true;
    });
  });

  test('a 2xx without its data is an error, not a result whose data is undefined', async () => {
    routes.set('/social/v1/tweets/2', (res) => res.writeHead(200, { 'content-type': 'application/json', 'x-credits-charged': '100', 'x-credits-remaining': '800' }).end('{"meta":{}}'));
    await assert.rejects(client().tweet('2'), (e: unknown) => e instanceof UnreadableAnswerError && /without its `data`/.test(e.message) && e.credits?.charged === 100);
    routes.set('/social/v1/tweets/3', (res) => res.writeHead(204).end());
    await assert.rejects(client().tweet('3'), (e: unknown) => e instanceof UnreadableAnswerError && e.status === 204);
    routes.set('/api/v1/usage', (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}'));
    await assert.rejects(client().usagePage(), (e: unknown) => e instanceof UnreadableAnswerError && /without its `items`/.test(e.message));
  });

  test('a JSON body that stalls after its headers is given up after timeoutMs: a charged call once, a free one retried', async () => {
    const stall = (res: import('node:http').ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-credits-charged': '100', 'x-credits-remaining': '700' });
      res.write('{"data":');
    };
    routes.set('/social/v1/tweets/4', stall);
    routes.set('/api/v1/account', stall);
    hits = 0;
    const started = Date.now();
    await assert.rejects(client({ timeoutMs: 200, maxRetries: 2 }).tweet('4'), (e: unknown) => {
      assert.ok(e instanceof UnreadableAnswerError, String(e));
      assert.equal(e.timedOut, true);
      assert.match(e.message, /did not come in full \(no bytes of the answer within 200 ms\); the call went through: 100 credits charged\. It was not sent again/);
      return true;
    });
    assert.ok(Date.now() - started < 1_500);
    assert.equal(hits, 1, 'charged: not sent again');
    hits = 0;
    await assert.rejects(client({ timeoutMs: 200, maxRetries: 2 }).account(), (e: unknown) => e instanceof UnreadableAnswerError && e.timedOut);
    assert.equal(hits, 3, 'free: retried');
  });

  test('a 402 without details: required and balance are undefined, not NaN; a 429 scope is one of three', async () => {
    routes.set('/social/v1/tweets/5', (res) => envelope(res, 402, 'insufficient_credits', 'poor'));
    await assert.rejects(client().tweet('5'), (e: unknown) => e instanceof InsufficientCreditsError && e.required === undefined && e.balance === undefined);
    routes.set('/social/v1/tweets/6', (res) => envelope(res, 429, 'rate_limited', 'slow down', { scope: 'galaxy', retryAfterSeconds: 1_000 }));
    await assert.rejects(client().tweet('6'), (e: unknown) => e instanceof RateLimitedError && e.scope === undefined && e.retryAfterSeconds === 1_000);
    routes.set('/social/v1/tweets/7', (res) => envelope(res, 429, 'rate_limited', 'slow down', { scope: 'account', retryAfterSeconds: 1_000 }));
    await assert.rejects(client().tweet('7'), (e: unknown) => e instanceof RateLimitedError && e.scope === 'account');
  });
});
