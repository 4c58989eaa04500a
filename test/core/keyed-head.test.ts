// A keyed 2xx's head goes to Node as the table setHeader would have filled (unchecked-head.ts): the
// bytes on the wire must be those of writeHead given the same headers, in order, whichever path
// writes them, and Node's own view of the response (getHeader) must still hold.
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { KeyedHead } from '../../src/http/keyed-headers.js';
import { headsUnchecked, writeOwnHead, type HeadTable } from '../../src/http/unchecked-head.js';
import { startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { demoNoon } from '../helpers/social.js';
import { raw } from '../helpers/raw-http.js';

/** One GET over a fresh connection; the answer's head lines and body as sent (Date dropped: it changes). */
async function rawGet(port: number, path: string, headers: Record<string, string> = {}): Promise<{ head: string[]; body: string }> {
  const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  const r = await raw(port, `GET ${path} HTTP/1.1\r\nHost: t\r\n${extra}Connection: close\r\n\r\n`);
  return { head: r.headers.split('\r\n').filter((l) => !l.startsWith('Date: ')), body: r.body };
}

/** A server answering every request by `answer`, for the length of `fn`. */
async function serving(answer: (res: ServerResponse) => void, fn: (port: number) => Promise<void>): Promise<void> {
  const server = createServer((_req, res) => answer(res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await fn((server.address() as { port: number }).port);
  } finally {
    await new Promise((r) => server.close(r));
  }
}

const table = (body: string): HeadTable => ({
  'x-request-id': ['x-request-id', 'req_abc-123_Z'],
  'ratelimit-limit': ['ratelimit-limit', '600'],
  'x-credits-remaining': ['x-credits-remaining', '1234567'],
  'cache-control': ['cache-control', 'no-store'],
  'content-type': ['content-type', 'application/json; charset=utf-8'],
  'content-length': ['content-length', String(Buffer.byteLength(body))],
});

describe('a keyed answer head, written from the table', () => {
  test('this Node keeps its header table where the gateway looks for it', () => {
    // Without it every keyed answer still goes out, through writeHead's checks: a Node that moves the
    // table costs each answer its checks again, which this test is here to say.
    assert.equal(headsUnchecked, true);
  });

  test('a keyed head enumerates its own 9 headers only, in order, even beside a property added to Object.prototype', () => {
    // Node's loop over its table takes inherited properties too: one on Object.prototype (a polluted
    // prototype) must not become a header. Synchronous: nothing else runs while the prototype holds it.
    const head = new KeyedHead('req_1', { allowed: true, limit: 600, remaining: 599, resetSeconds: 1, retryAfterSeconds: 0 }, 100, 9900, 42);
    const proto = Object.prototype as Record<string, unknown>;
    const names: string[] = [];
    proto['x-injected'] = ['x-injected', 'yes'];
    try {
      for (const name in head) names.push(name);
    } finally {
      delete proto['x-injected'];
    }
    assert.deepEqual(names, ['x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-credits-charged', 'x-credits-remaining', 'cache-control', 'content-type', 'content-length']);
    assert.deepEqual(Object.values(head).map((e) => e[1]), ['req_1', '600', '599', '1', '100', '9900', 'no-store', 'application/json; charset=utf-8', '42']);
  });

  test("the same bytes as writeHead given the same headers; Node's getHeader reads them", async () => {
    const body = '{"data":"é…"}';
    let seen: unknown;
    const own = await new Promise<{ head: string[]; body: string }>((resolve, reject) => {
      serving(
        (res) => {
          writeOwnHead(res, 201, table(body));
          seen = [res.getHeader('content-length'), res.getHeader('x-request-id'), res.headersSent];
          res.end(body);
        },
        async (port) => resolve(await rawGet(port, '/')),
      ).catch(reject);
    });
    const checked = await new Promise<{ head: string[]; body: string }>((resolve, reject) => {
      serving(
        (res) => {
          const pairs: string[] = [];
          for (const [name, value] of Object.values(table(body))) pairs.push(name, value);
          res.writeHead(201, pairs);
          res.end(body);
        },
        async (port) => resolve(await rawGet(port, '/')),
      ).catch(reject);
    });
    assert.deepEqual(own, checked);
    assert.equal(own.body, body);
    assert.deepEqual(own.head.slice(0, 7), [
      'HTTP/1.1 201 Created',
      'x-request-id: req_abc-123_Z',
      'ratelimit-limit: 600',
      'x-credits-remaining: 1234567',
      'cache-control: no-store',
      'content-type: application/json; charset=utf-8',
      `content-length: ${Buffer.byteLength(body)}`,
    ]);
    // Not chunked: Node saw the content-length in the table.
    assert.ok(!own.head.some((l) => /^transfer-encoding/i.test(l)));
    assert.deepEqual(seen, [String(Buffer.byteLength(body)), 'req_abc-123_Z', true]);
  });

  test('a header already on the response is kept: the table goes through writeHead with it', async () => {
    await serving(
      (res) => {
        res.setHeader('connection', 'close');
        writeOwnHead(res, 200, table('{}'));
        res.end('{}');
      },
      async (port) => {
        const r = await rawGet(port, '/');
        assert.ok(r.head.includes('connection: close'), r.head.join('\n'));
        assert.ok(r.head.includes('x-credits-remaining: 1234567'));
        assert.ok(r.head.includes('content-length: 2'));
        assert.equal(r.body, '{}');
      },
    );
  });
});

describe('keyed answers over a socket', () => {
  let h: Harness;
  let acct: TestAccount;
  let port: number;
  const demo = demoNoon();
  before(async () => {
    h = await startHarness('sqlite', {}, demo.tweak);
    acct = await h.account({ credits: 10_000 });
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    port = (h.app.server.address() as { port: number }).port;
  });
  after(() => h.close());

  for (const [label, path, cost] of [
    ['the echo (free)', '/echo/v1/hello', 0],
    ['a charged tweet', () => `/social/v1/tweets/${demo.sample.tweetIds[0]!}`, 100],
  ] as const) {
    test(`${label}: every contract header once, in order, with the call's values`, async () => {
      const start = (await h.deps.meter.balance(acct.accountId))!;
      const r = await rawGet(port, typeof path === 'string' ? path : path(), { 'x-api-key': acct.apiKey });
      assert.equal(r.head[0], 'HTTP/1.1 200 OK');
      const names = r.head.slice(1).map((l) => l.slice(0, l.indexOf(':')));
      assert.deepEqual(names.slice(0, 9), ['x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-credits-charged', 'x-credits-remaining', 'cache-control', 'content-type', 'content-length']);
      const value = (name: string) => r.head.find((l) => l.startsWith(`${name}: `))!.slice(name.length + 2);
      const answer = JSON.parse(r.body) as { meta: { requestId: string } };
      assert.equal(value('x-request-id'), answer.meta.requestId);
      assert.equal(value('x-credits-charged'), String(cost));
      assert.equal(value('x-credits-remaining'), String(start - cost));
      assert.equal(await h.deps.meter.balance(acct.accountId), start - cost);
      assert.equal(value('content-length'), String(Buffer.byteLength(r.body)));
      assert.equal(value('cache-control'), 'no-store');
    });
  }
});
