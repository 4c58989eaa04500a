// The client's per-attempt deadline on real sockets: a server that accepts and never answers is given
// up on and retried (a POST with the same Idempotency-Key), then a NetworkError; an answer whose
// headers come in time is not cut while its body is slow.
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { NetworkError, SdgClient, type RetryEvent } from '../../sdk/src/index.js';

const listen = (s: Server | HttpServer) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port)));

describe('the per-attempt deadline', () => {
  let silent: Server;
  let silentPort: number;
  const heads: string[] = [];
  const sockets: Socket[] = [];
  let slow: HttpServer;
  let slowPort: number;

  before(async () => {
    // Reads each request and never answers (a host that vanished behind a firewall, a hung process).
    silent = createServer((socket) => {
      sockets.push(socket);
      socket.on('data', (d: Buffer) => heads.push(d.toString('latin1').split('\r\n\r\n')[0]!));
      socket.on('error', () => undefined);
    });
    silentPort = await listen(silent);
    // Headers at once, the body 400 ms later.
    slow = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":');
      setTimeout(() => res.end('{"message":"late"}}'), 400);
    });
    slowPort = await listen(slow);
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
    await new Promise((r) => slow.close(r));
  });

  test('a refused connection is a NetworkError that did not time out', async () => {
    const closed = await new Promise<number>((res) => {
      const srv = createServer();
      srv.listen(0, '127.0.0.1', () => {
        const port = (srv.address() as { port: number }).port;
        srv.close(() => res(port));
      });
    });
    const client = new SdgClient({ apiKey: 'sdg_test', baseUrl: `http://127.0.0.1:${closed}`, retry: { maxRetries: 0 } });
    await assert.rejects(client.balance(), (e: unknown) => e instanceof NetworkError && e.timedOut === false);
  });

  test('no answer: each attempt is given up at the deadline and retried, a POST with its one Idempotency-Key, then NetworkError', async () => {
    const retries: RetryEvent[] = [];
    const client = new SdgClient({ apiKey: 'sdg_test', baseUrl: `http://127.0.0.1:${silentPort}`, timeoutMs: 150, retry: { maxRetries: 2, baseDelayMs: 1 }, onRetry: (e) => retries.push(e) });
    heads.length = 0;
    const started = Date.now();
    await assert.rejects(client.createKey({ name: 'k' }), (e: unknown) => {
      assert.ok(e instanceof NetworkError, String(e));
      assert.match(e.message, /no answer within 150 ms/);
      assert.equal(e.timedOut, true, 'told apart from a refused connection');
      return true;
    });
    assert.ok(Date.now() - started >= 3 * 150, 'three attempts, each waited out');
    assert.equal(retries.length, 2);
    assert.equal(heads.length, 3, heads.join('\n---\n'));
    const keys = heads.map((h) => /^idempotency-key: (.+)$/im.exec(h)?.[1]);
    assert.ok(keys[0]);
    assert.deepEqual(keys, [keys[0], keys[0], keys[0]]);
  });

  test('headers in time: a slow body is read to its end, not cut by the deadline', async () => {
    const client = new SdgClient({ apiKey: 'sdg_test', baseUrl: `http://127.0.0.1:${slowPort}`, timeoutMs: 100, retry: { maxRetries: 0 } });
    const res = await client.fetch(`http://127.0.0.1:${slowPort}/echo/v1/hello`);
    assert.equal(await res.text(), '{"data":{"message":"late"}}');
  });

  test('a caller\'s AbortSignal.timeout written inline ends the call even when the collector runs meanwhile', async () => {
    // Node 20 collected the link from the caller's signal to the attempt's (a Request made from
    // another Request), and the call then waited for ever: CI saw it wait 300 s. Collecting every
    // 20 ms makes that certain.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const collecting = setInterval(gc, 20);
    try {
      for (const timeoutMs of [0, 60_000]) {
        const client = new SdgClient({ apiKey: 'sdg_test', baseUrl: `http://127.0.0.1:${silentPort}`, timeoutMs, retry: { maxRetries: 0 } });
        const outcome = await Promise.race([
          client.balance({ signal: AbortSignal.timeout(300) }).then(
            () => 'answered',
            (e: Error) => e.name,
          ),
          new Promise<string>((r) => setTimeout(r, 5_000, 'still waiting')),
        ]);
        assert.equal(outcome, 'TimeoutError', `timeoutMs ${timeoutMs}`);
      }
    } finally {
      clearInterval(collecting);
    }
  });

  test('timeoutMs 0: no deadline (the caller\'s own signal still ends the wait)', async () => {
    const client = new SdgClient({ apiKey: 'sdg_test', baseUrl: `http://127.0.0.1:${silentPort}`, timeoutMs: 0, retry: { maxRetries: 0 } });
    const started = Date.now();
    await assert.rejects(client.balance({ signal: AbortSignal.timeout(400) }), (e: unknown) => (e as Error).name === 'TimeoutError');
    assert.ok(Date.now() - started >= 390);
  });
});
