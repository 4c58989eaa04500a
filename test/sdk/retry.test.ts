// Retries against the real gateway: a real 429 (a low per-key limit) retried after its Retry-After;
// a Retry-After beyond the cap surfaced at once; a POST whose answer was lost retried with the same
// Idempotency-Key and charged once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RateLimitedError, retryDelayMs, SdgClient, defaultRetry, type RetryEvent } from '../../sdk/src/index.js';
import { startGateway, type Gateway } from './gateway.js';

describe('retries and idempotency', () => {
  let g: Gateway;
  before(async () => {
    g = await startGateway({ COSTS: JSON.stringify({ generateExport: 7 }) });
  });
  after(() => g.close());

  /** Spends a key's whole bucket, so that its next request answers 429. */
  async function drain(apiKey: string): Promise<void> {
    // No retry of a 429; a connection dropped by the host's load is still retried.
    const raw = new SdgClient({ apiKey, baseUrl: g.url, retry: { maxRetries: 3, statuses: [] } });
    for (let i = 0; i < 200; i++) {
      try {
        await raw.hello();
      } catch (e) {
        if (e instanceof RateLimitedError) return;
        throw e;
      }
    }
    throw new Error('never rate limited');
  }

  test('a real 429 is retried after Retry-After (plus jitter) and succeeds', async () => {
    // 6 a minute: a token comes back every 10 s, so a stall of the host between the drain and the
    // call below cannot refill the bucket and hide the 429.
    const a = await g.account({ rateLimitPerMinute: 6 });
    await drain(a.apiKey);
    const retries: RetryEvent[] = [];
    const client = new SdgClient({ apiKey: a.apiKey, baseUrl: g.url, onRetry: (e) => retries.push(e) });
    const t0 = Date.now();
    const r = await client.hello();
    const elapsed = Date.now() - t0;
    assert.equal(r.data.accountId, a.accountId);
    assert.ok(retries.length >= 1);
    assert.equal(retries[0]!.status, 429);
    // Retry-After is 1 to 10 s here; the wait is at least that, plus at most the jitter.
    assert.ok(retries[0]!.delayMs >= 1000 && retries[0]!.delayMs <= 10_000 * (1 + defaultRetry.jitter), `waited ${retries[0]!.delayMs} ms`);
    assert.ok(elapsed >= retries[0]!.delayMs, `the retry waited (${elapsed} ms)`);
  });

  test('an AbortSignal ends the wait for a retry at once', async () => {
    const a = await g.account({ rateLimitPerMinute: 6 });
    await drain(a.apiKey);
    const client = new SdgClient({ apiKey: a.apiKey, baseUrl: g.url });
    const t0 = Date.now();
    await assert.rejects(client.hello({ signal: AbortSignal.timeout(200) }), (e: unknown) => (e as Error).name === 'TimeoutError');
    assert.ok(Date.now() - t0 < 5_000, 'did not wait out Retry-After (10 s)');
  });

  test('a Retry-After beyond the cap is not waited for: RateLimitedError with when to retry', async () => {
    const a = await g.account({ rateLimitPerMinute: 2 });
    await drain(a.apiKey);
    const retries: RetryEvent[] = [];
    const client = new SdgClient({ apiKey: a.apiKey, baseUrl: g.url, retry: { maxDelayMs: 5_000 }, onRetry: (e) => retries.push(e) });
    const t0 = Date.now();
    await assert.rejects(client.hello(), (e: unknown) => {
      assert.ok(e instanceof RateLimitedError);
      assert.equal(e.code, 'rate_limited');
      assert.ok((e.retryAfterSeconds ?? 0) > 5, `retry after ${e.retryAfterSeconds} s`);
      assert.equal(e.scope, 'key');
      return true;
    });
    assert.equal(retries.length, 0);
    assert.ok(Date.now() - t0 < 2_000);
  });

  test('a POST whose answer was lost is retried with the same Idempotency-Key: replayed, charged once', async () => {
    const a = await g.account({ credits: 1_000 });
    const sent: string[] = [];
    let lose = 1;
    // The first answer reaches the gateway and is done there, then the connection "drops".
    const flaky: typeof fetch = async (input, init) => {
      const req = new Request(input, init);
      if (req.method === 'POST') sent.push(req.headers.get('idempotency-key') ?? '');
      const res = await fetch(req);
      if (req.method === 'POST' && lose-- > 0) throw new TypeError('fetch failed');
      return res;
    };
    const client = new SdgClient({ apiKey: a.apiKey, baseUrl: g.url, fetch: flaky, retry: { baseDelayMs: 10 } });
    const range = { startDate: '2025-06-01T00:00:00Z', endDate: '2025-06-01T06:00:00Z' };
    const r = await client.generateExport(range);
    assert.equal(sent.length, 2);
    assert.match(sent[0]!, /^[0-9a-f-]{36}$/);
    assert.equal(sent[1], sent[0], 'the retry reused the key');
    assert.equal(r.replayed, true);
    assert.deepEqual(r.credits, { charged: 0, remaining: 993 });
    assert.equal((await client.balance()).data.balance, 993, 'charged once');
    assert.equal((await client.exports().toArray()).length, 1, 'one export');

    // The same with a 503 in place of the lost answer; a new call gets a new key.
    lose = 1;
    const flaky503: typeof fetch = async (input, init) => {
      const req = new Request(input, init);
      if (req.method === 'POST') sent.push(req.headers.get('idempotency-key') ?? '');
      const res = await fetch(req);
      if (req.method === 'POST' && lose-- > 0) return new Response('{}', { status: 503, headers: { 'retry-after': '0' } });
      return res;
    };
    const c2 = new SdgClient({ apiKey: a.apiKey, baseUrl: g.url, fetch: flaky503 });
    const r2 = await c2.generateExport({ ...range, endDate: '2025-06-01T07:00:00Z' });
    assert.equal(sent.length, 4);
    assert.equal(sent[3], sent[2]);
    assert.notEqual(sent[2], sent[0]);
    assert.equal(r2.replayed, true);
    assert.equal((await client.balance()).data.balance, 986);
    assert.equal((await client.exports().toArray()).length, 2);

    // A key chosen by the caller is sent as given.
    const mine = await client.generateExport({ ...range, endDate: '2025-06-01T08:00:00Z' }, { idempotencyKey: 'my-key-1' });
    const again = await client.generateExport({ ...range, endDate: '2025-06-01T08:00:00Z' }, { idempotencyKey: 'my-key-1' });
    assert.equal(again.data.id, mine.data.id);
    assert.equal(again.replayed, true);
    assert.equal((await client.balance()).data.balance, 979);
  });

  test('the wait: Retry-After or exponential backoff, capped, with added jitter only', () => {
    const r = { ...defaultRetry, baseDelayMs: 100, maxDelayMs: 1_000, jitter: 0.5 };
    assert.equal(retryDelayMs(1, 2, r, () => 0), 1_000, 'capped');
    assert.equal(retryDelayMs(1, 0.5, r, () => 0), 500);
    assert.equal(retryDelayMs(1, 0.5, r, () => 1), 750);
    assert.equal(retryDelayMs(1, undefined, r, () => 0), 100);
    assert.equal(retryDelayMs(3, undefined, r, () => 0), 400);
    assert.equal(retryDelayMs(10, undefined, r, () => 0), 1_000);
  });
});
