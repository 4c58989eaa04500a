// Errors raised before routing answer in the envelope with a request id (malformed escapes, requests
// Node's parser rejects), the server's socket limits come from configuration, and a download link
// cannot carry an expiry beyond the configured TTL.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/config/env.js';
import { verifyDownload } from '../../src/exports/download-link.js';
import { startHarness, type Harness, type TestAccount } from '../helpers/harness.js';

interface Envelope {
  error: { code: string; message: string };
  meta: { requestId: string };
}

/** Sends raw bytes and reads the whole answer (the server closes the connection after an error). */
function raw(port: number, bytes: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (data += chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), headers: head, body });
    });
    socket.write(bytes);
  });
}

function assertEnvelope(body: string, code = 'invalid_request'): Envelope {
  const env = JSON.parse(body) as Envelope;
  assert.equal(env.error.code, code);
  assert.match(env.meta.requestId, /\S/);
  return env;
}

describe('errors before routing', () => {
  let h: Harness;
  let acct: TestAccount;
  let port: number;
  before(async () => {
    h = await startHarness('sqlite');
    acct = await h.account();
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    port = (h.app.server.address() as { port: number }).port;
  });
  after(() => h.close());

  for (const path of ['/social/v1/tweets/%ZZ', '/social/v1/tweets/%C0%AF', '/social/v1/tweets/%ED%A0%80']) {
    test(`a malformed escape (${path}) answers 400 in the envelope with a request id`, async () => {
      const res = await h.app.inject({ method: 'GET', url: path, headers: { 'x-api-key': acct.apiKey } });
      assert.equal(res.statusCode, 400);
      const env = assertEnvelope(res.body);
      assert.equal(res.headers['x-request-id'], env.meta.requestId);
    });
  }

  test('a path parameter as long as its schema allows reaches the route; a longer segment than the router takes is a 400 saying so', async () => {
    // A Bluesky handle may be 253 characters (the username schema's limit); the router once refused more than 100.
    const handle = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.social`;
    assert.ok(handle.length > 100 && handle.length <= 253);
    const long = await h.app.inject({ method: 'GET', url: `/social/v1/users/by/username/${handle}`, headers: { 'x-api-key': acct.apiKey } });
    assert.equal(long.statusCode, 404, long.body);
    assert.equal(assertEnvelope(long.body, 'not_found').error.message.includes('user'), true, long.body);
    const tooLong = await h.app.inject({ method: 'GET', url: `/social/v1/users/by/username/${'a'.repeat(300)}`, headers: { 'x-api-key': acct.apiKey } });
    assert.equal(tooLong.statusCode, 400);
    const env = assertEnvelope(tooLong.body);
    assert.equal(env.error.message, 'A path parameter is longer than 256 characters.');
    assert.equal(tooLong.headers['x-request-id'], env.meta.requestId);
    // Within the router's limit, the schema still has its say.
    const bad = await h.app.inject({ method: 'GET', url: `/social/v1/tweets/${'1'.repeat(120)}`, headers: { 'x-api-key': acct.apiKey } });
    assert.equal(assertEnvelope(bad.body).error.message, 'params.id must be a numeric id of 1 to 19 digits.');
  });

  test('oversized headers answer 431 in the envelope', async () => {
    const res = await raw(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.equal(res.status, 431);
    const env = assertEnvelope(res.body);
    assert.match(res.headers, new RegExp(`x-request-id: ${env.meta.requestId}`, 'i'));
  });

  for (const [name, bytes] of [
    ['Content-Length: -1', 'POST /api/v1/api-keys HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'],
    ['both Transfer-Encoding and Content-Length', 'POST /api/v1/api-keys HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['an unknown method', 'FROB /health HTTP/1.1\r\nHost: x\r\n\r\n'],
  ] as const) {
    test(`a request Node's parser rejects (${name}) answers 400 in the envelope`, async () => {
      const res = await raw(port, bytes);
      assert.equal(res.status, 400);
      assertEnvelope(res.body);
    });
  }

  test("the server's timeouts and limits come from configuration", () => {
    const s = h.app.server;
    assert.equal(s.requestTimeout, 30_000);
    assert.equal(s.headersTimeout, 10_000);
    assert.equal(s.keepAliveTimeout, 5_000);
    assert.equal(s.maxRequestsPerSocket, 1_000);
    assert.equal(s.maxConnections, 1_024);
    assert.equal(s.timeout, 120_000);
  });
});

test('a connection that sends part of its headers is answered 408 and closed after SERVER_HEADERS_TIMEOUT_MS, not Node\'s 30 s check', { timeout: 30_000 }, async () => {
  const h = await startHarness('sqlite', { SERVER_HEADERS_TIMEOUT_MS: '1000', SERVER_REQUEST_TIMEOUT_MS: '2000' });
  try {
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (h.app.server.address() as { port: number }).port;
    const started = performance.now();
    const res = await raw(port, 'GET /echo/v1/hello HTTP/1.1\r\nHost: x\r\n');
    const took = performance.now() - started;
    assert.equal(res.status, 408);
    assertEnvelope(res.body);
    // Within the timeout and one check (200 ms here), with room for a loaded host; Node's default
    // check alone would take up to 30 s.
    assert.ok(took >= 900 && took < 8_000, `answered after ${Math.round(took)} ms`);
  } finally {
    await h.close();
  }
});

test('server limits are validated at start-up', () => {
  assert.equal(loadConfig({ SERVER_REQUEST_TIMEOUT_MS: '60000' }).server.requestTimeoutMs, 60_000);
  assert.throws(() => loadConfig({ SERVER_REQUEST_TIMEOUT_MS: '0' }), (e: Error) => e instanceof ConfigError && /SERVER_REQUEST_TIMEOUT_MS/.test(e.message));
  assert.throws(() => loadConfig({ SERVER_REQUEST_TIMEOUT_MS: '5000', SERVER_HEADERS_TIMEOUT_MS: '6000' }), /SERVER_HEADERS_TIMEOUT_MS/);
  assert.throws(() => loadConfig({ SERVER_MAX_CONNECTIONS: 'many' }), /SERVER_MAX_CONNECTIONS/);
});

test('a genuinely signed link with an expiry beyond the maximum TTL is refused', () => {
  const secret = 's'.repeat(40);
  const now = Date.UTC(2026, 0, 1);
  const sign = (expires: number) =>
    createHmac('sha256', secret).update('export-download\0').update('7').update('\0').update('exports/7.jsonl.gz').update('\0').update(String(expires)).digest('base64url');
  const within = Math.floor(now / 1000) + 900;
  verifyDownload({ current: secret, previous: [] }, '7', 'exports/7.jsonl.gz', String(within), sign(within), now, 900);
  const far = Math.floor(now / 1000) + 10 * 365 * 24 * 3600;
  assert.throws(() => verifyDownload({ current: secret, previous: [] }, '7', 'exports/7.jsonl.gz', String(far), sign(far), now, 900), { code: 'not_found' });
});
