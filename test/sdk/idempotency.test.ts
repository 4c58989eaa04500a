// A POST retried after its own timeout may find its first attempt still running at the gateway (409
// idempotency_conflict, "still being processed"): the SDK waits and sends it again with the same key
// until the first is done and replayed. A key reused with another body stays a ConflictError at once;
// and every error of a POST carries the Idempotency-Key it was sent with, to replay it later.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConflictError, NetworkError, SdgClient, type RetryEvent } from '../../sdk/src/index.js';
import { envelope, silentServer, stub } from './faults.js';
import { startGateway, type Gateway } from './gateway.js';

describe('a POST whose first attempt is still running', () => {
  let g: Gateway;
  before(async () => {
    g = await startGateway();
  });
  after(() => g.close());

  test('409 "still being processed": waited for and sent again with the same key, then the first answer replayed', async () => {
    // The gateway's rule (src/credits/idempotency.ts): the key is claimed by the first request, and
    // a repeat while it runs is 409; once it is done, a repeat replays its answer.
    const runs = new Map<string, { done: boolean }>();
    const keys: string[] = [];
    const s = await stub((req, res) => {
      const key = String(req.headers['idempotency-key']);
      keys.push(key);
      const run = runs.get(key);
      if (!run) {
        const started = { done: false };
        runs.set(key, started);
        // The first attempt takes longer than the client waits for it.
        setTimeout(() => {
          started.done = true;
          if (!res.destroyed) res.writeHead(202, { 'content-type': 'application/json' }).end('{"data":{"id":"1"}}');
        }, 400);
        return;
      }
      if (!run.done) return envelope(res, 409, 'idempotency_conflict', 'A request with this Idempotency-Key is still being processed; retry shortly.');
      res.writeHead(202, { 'content-type': 'application/json', 'idempotent-replayed': 'true' }).end('{"data":{"id":"1"}}');
    });
    try {
      const retries: RetryEvent[] = [];
      const client = new SdgClient({ apiKey: 'sdg_test', baseUrl: s.url, timeoutMs: 150, retry: { baseDelayMs: 100, maxRetries: 6 }, onRetry: (e) => retries.push(e) });
      const r = await client.generateExport({ startDate: '2025-06-01T00:00:00Z', endDate: '2025-06-01T01:00:00Z' });
      assert.equal(r.data.id, '1');
      assert.equal(r.replayed, true);
      assert.ok(retries.some((e) => e.status === 409), 'waited on the 409');
      assert.equal(new Set(keys).size, 1, 'one key throughout');
    } finally {
      await s.close();
    }
  });

  test('the same key with another body is a ConflictError at once, carrying the key', async () => {
    const a = await g.account();
    const retries: RetryEvent[] = [];
    const client = new SdgClient({ apiKey: a.apiKey, baseUrl: g.url, retry: { baseDelayMs: 5 }, onRetry: (e) => retries.push(e) });
    await client.addToWatchlist([{ username: g.sample.usernames[0]! }], { idempotencyKey: 'mine-1' });
    await assert.rejects(client.addToWatchlist([{ username: g.sample.usernames[1]! }], { idempotencyKey: 'mine-1' }), (e: unknown) => {
      assert.ok(e instanceof ConflictError);
      assert.equal(e.code, 'idempotency_conflict');
      assert.equal(e.idempotencyKey, 'mine-1');
      return true;
    });
    assert.equal(retries.length, 0);
  });

  test("a POST that never got an answer says the key the SDK made, and replaying with it does the POST once", async () => {
    const silent = await silentServer();
    try {
      const client = new SdgClient({ apiKey: 'sdg_test', baseUrl: silent.url, timeoutMs: 100, retry: { maxRetries: 1, baseDelayMs: 1 } });
      let key: string | undefined;
      await assert.rejects(client.generateExport({ startDate: '2025-06-01T00:00:00Z', endDate: '2025-06-01T01:00:00Z' }), (e: unknown) => {
        assert.ok(e instanceof NetworkError);
        assert.equal(e.maybeCharged, true);
        key = e.idempotencyKey;
        assert.match(key ?? '', /^[0-9a-f-]{36}$/);
        assert.ok(e.message.includes(`send it again with Idempotency-Key ${key}`));
        return true;
      });
      assert.deepEqual(silent.heads.map((h) => /^idempotency-key: (.+)$/im.exec(h)?.[1]), [key, key]);
    } finally {
      await silent.close();
    }
    // Against the real gateway: the key a caller got from an error replays the first.
    const a = await g.account();
    const client = new SdgClient({ apiKey: a.apiKey, baseUrl: g.url });
    const first = await client.addToWatchlist([{ username: g.sample.usernames[2]! }], { idempotencyKey: 'from-error' });
    const again = await client.addToWatchlist([{ username: g.sample.usernames[2]! }], { idempotencyKey: 'from-error' });
    assert.equal(again.replayed, true);
    assert.equal(again.data.batchId, first.data.batchId);
  });
});
