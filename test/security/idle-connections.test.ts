// SERVER_CONNECTION_TIMEOUT_MS: a connection with no activity at all is closed, by a sweep over the
// open connections (src/http/idle-connections.ts) rather than Node's timer per socket.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sweepIdleConnections } from '../../src/http/idle-connections.js';
import { startHarness } from '../helpers/harness.js';
import { startServer } from '../helpers/processes.js';

const listen = (server: Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** Opens a connection, sends `bytes`, and resolves with the ms from then until the server closes it. */
function closedAfter(port: number, bytes: string): Promise<{ ms: number; data: string }> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let data = '';
    s.setEncoding('latin1');
    s.on('error', () => undefined);
    s.on('data', (c: string) => (data += c));
    const started = performance.now();
    s.on('close', () => resolve({ ms: performance.now() - started, data }));
    s.write(bytes);
  });
}

test('a request left unanswered, with nothing read or written, is closed after the timeout (and within 1.2 times it, with room for a loaded host)', { timeout: 20_000 }, async () => {
  const server = createServer(() => undefined); // never answers
  server.requestTimeout = 0;
  const idle = sweepIdleConnections(server, 500);
  const port = await listen(server);
  try {
    const { ms } = await closedAfter(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.ok(ms >= 480 && ms < 3_000, `closed after ${Math.round(ms)} ms`);
    assert.equal(idle.closed(), 1);
  } finally {
    idle.stop();
    await close(server);
  }
});

test('a client that stops reading a large answer is closed once the answer stops moving', { timeout: 20_000 }, async () => {
  const chunk = Buffer.alloc(64 * 1024, 97);
  let writes = 0;
  let startedAt = 0;
  // A paused client never reads the close: the server's side of the connection says when it ended.
  let serverClosed!: (ms: number) => void;
  const closedAt = new Promise<number>((resolve) => (serverClosed = resolve));
  const server = createServer((req, res) => {
    startedAt = performance.now();
    req.socket.once('close', () => serverClosed(performance.now() - startedAt));
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    // Streams as a download does: the next chunk when the last one is taken (up to 1 GB).
    const more = (): void => {
      while (writes < 16_384) {
        writes++;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  });
  const idle = sweepIdleConnections(server, 500);
  const port = await listen(server);
  const s = connect(port, '127.0.0.1');
  try {
    s.on('error', () => undefined);
    s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    s.pause(); // never reads
    const ms = await closedAt;
    assert.ok(writes < 16_384, 'the answer was still under way');
    assert.ok(ms >= 480 && ms < 5_000, `closed after ${Math.round(ms)} ms`);
    assert.equal(idle.closed(), 1);
  } finally {
    s.destroy();
    idle.stop();
    await close(server);
  }
});

test('a connection that keeps sending, however slowly, is not closed: any byte counts as activity', { timeout: 20_000 }, async () => {
  const server = createServer((req, res) => {
    let n = 0;
    req.on('data', (c: Buffer) => (n += c.length));
    req.on('end', () => res.end(`got ${n}`));
  });
  server.requestTimeout = 0;
  const idle = sweepIdleConnections(server, 400);
  const port = await listen(server);
  try {
    // One chunk of the body every 150 ms for 2 s: five timeouts long, never silent for one.
    const s = connect(port, '127.0.0.1');
    s.setEncoding('latin1');
    let data = '';
    s.on('data', (c: string) => (data += c));
    s.write('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n');
    for (let i = 0; i < 13; i++) {
      await new Promise((r) => setTimeout(r, 150));
      s.write('1\r\nx\r\n');
    }
    s.write('0\r\n\r\n');
    await new Promise((r) => s.on('close', r));
    assert.match(data, /^HTTP\/1\.1 200 /);
    assert.match(data, /got 13$/);
    assert.equal(idle.closed(), 0);
  } finally {
    idle.stop();
    await close(server);
  }
});

test('the gateway closes an idle connection after SERVER_CONNECTION_TIMEOUT_MS, even within a longer keep-alive timeout (Node\'s timer gave it the keep-alive timeout instead), and its Keep-Alive header says so', { timeout: 30_000 }, async () => {
  const h = await startHarness('sqlite', { SERVER_CONNECTION_TIMEOUT_MS: '1000', SERVER_KEEP_ALIVE_TIMEOUT_MS: '60000' });
  try {
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (h.app.server.address() as { port: number }).port;
    const { ms, data } = await closedAfter(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(data, /^HTTP\/1\.1 200 /);
    // The header promises what the gateway keeps: a client that trusted "timeout=60" would send on a closed connection.
    assert.match(data, /keep-alive: timeout=1[,\r]/i);
    assert.ok(ms >= 950 && ms < 8_000, `closed after ${Math.round(ms)} ms`);
  } finally {
    await h.close();
  }
});

test('a keep-alive timeout longer than the connection timeout is said at start-up', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdg-idle-'));
  try {
    const longer = await startServer({ DATA_DIR: dir, ROLES: 'api', SERVER_CONNECTION_TIMEOUT_MS: '2000', SERVER_KEEP_ALIVE_TIMEOUT_MS: '60000' });
    await longer.stop();
    assert.match(longer.output(), /SERVER_KEEP_ALIVE_TIMEOUT_MS=60000 is longer than SERVER_CONNECTION_TIMEOUT_MS=2000, which closes idle kept-alive connections too: they are kept alive for 2000 ms/);
    const shorter = await startServer({ DATA_DIR: dir, ROLES: 'api', SERVER_CONNECTION_TIMEOUT_MS: '60000', SERVER_KEEP_ALIVE_TIMEOUT_MS: '2000' });
    await shorter.stop();
    assert.doesNotMatch(shorter.output(), /SERVER_KEEP_ALIVE_TIMEOUT_MS/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
