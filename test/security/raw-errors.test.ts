// Errors raised before routing answer in the envelope with a request id (malformed escapes, requests
// Node's parser rejects), the server's socket limits come from configuration, and a download link
// cannot carry an expiry beyond the configured TTL.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/config/env.js';
import { signDownload, verifiedDownload } from '../../src/exports/download-link.js';
import type { ExportRow } from '../../src/exports/export-repo.js';
import { startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { until } from '../helpers/processes.js';
import { raw } from '../helpers/raw-http.js';
import { addressKey } from '../../src/ratelimit/address-key.js';

interface Envelope {
  error: { code: string; message: string };
  meta: { requestId: string };
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
      // Errors may repeat the request's text: never sniffed as HTML.
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
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
    assert.match(res.headers, /x-content-type-options: nosniff/i);
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

  test('HTTP/1.1 without Host answers 400 in the envelope on every kind of route, uncharged; HTTP/1.0 may omit it', async () => {
    const before = await h.app.inject({ url: '/api/v1/credits/balance', headers: { 'x-api-key': acct.apiKey } });
    for (const path of ['/echo/v1/hello', '/healthz', '/no/such/route']) {
      const res = await raw(port, `GET ${path} HTTP/1.1\r\nX-API-Key: ${acct.apiKey}\r\nConnection: close\r\n\r\n`);
      assert.equal(res.status, 400, `${path}: ${res.headers}`);
      const env = assertEnvelope(res.body);
      assert.equal(env.error.message, 'The Host header is missing: HTTP/1.1 requires it.');
      assert.match(res.headers, new RegExp(`x-request-id: ${env.meta.requestId}`, 'i'));
      assert.doesNotMatch(res.headers, /x-credits-charged/i);
    }
    const after = await h.app.inject({ url: '/api/v1/credits/balance', headers: { 'x-api-key': acct.apiKey } });
    assert.equal((after.json() as { data: { balance: number } }).data.balance, (before.json() as { data: { balance: number } }).data.balance);
    const old = await raw(port, 'GET /echo/v1/hello HTTP/1.0\r\nX-API-Key: ' + acct.apiKey + '\r\n\r\n');
    assert.equal(old.status, 200, old.headers);
    const withHost = await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    assert.equal(withHost.status, 200);
  });

  test('CONNECT answers 404 in the envelope and closes: the gateway is no proxy', async () => {
    const res = await raw(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    assert.equal(res.status, 404);
    const env = assertEnvelope(res.body, 'not_found');
    assert.equal(env.error.message, 'No route CONNECT example.com:443.');
    assert.match(res.headers, new RegExp(`x-request-id: ${env.meta.requestId}`, 'i'));
    assert.match(res.headers, /connection: close/i);
  });

  test('an Expect other than 100-continue answers 417 in the envelope, the request not run', async () => {
    const res = await raw(port, `POST /api/v1/api-keys HTTP/1.1\r\nHost: x\r\nX-API-Key: ${acct.apiKey}\r\nExpect: 200-ok\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
    assert.equal(res.status, 417);
    const env = assertEnvelope(res.body);
    assert.equal(env.error.message, 'Expect: 200-ok cannot be met: only 100-continue is.');
    assert.match(res.headers, new RegExp(`x-request-id: ${env.meta.requestId}`, 'i'));
    const keys = await h.app.inject({ url: '/api/v1/api-keys', headers: { 'x-api-key': acct.apiKey } });
    assert.equal((keys.json() as { items: unknown[] }).items.length, 1, 'no key was made');
  });

  test("the server's timeouts and limits come from configuration", () => {
    const s = h.app.server;
    assert.equal(s.requestTimeout, 30_000);
    assert.equal(s.headersTimeout, 10_000);
    assert.equal(s.keepAliveTimeout, 5_000);
    assert.equal(s.maxRequestsPerSocket, 1_000);
    // SERVER_MAX_CONNECTIONS is kept by connection-cap.ts, not Node's maxConnections (which drops unanswered): tested below.
    assert.equal(s.maxConnections, undefined);
    // SERVER_CONNECTION_TIMEOUT_MS is kept by a sweep (idle-connections.ts), not Node's timer per socket.
    assert.equal(s.timeout, 0);
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

/** `n` connections that send nothing; `paused`: nor read what they are sent. */
const idleSockets = (port: number, n: number, o: { paused?: boolean } = {}): Socket[] =>
  Array.from({ length: n }, () => {
    const s = connect(port, '127.0.0.1');
    s.on('error', () => undefined);
    if (o.paused) s.pause();
    return s;
  });

/** The server's open connections now. */
const openConnections = (h: Harness) => new Promise<number>((resolve, reject) => h.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));

test('a silent connection answered 408 is closed even if its client never reads or closes: it does not hold its place for SERVER_CONNECTION_TIMEOUT_MS', { timeout: 30_000 }, async () => {
  // Before, the server only half-closed it: 1,024 such connections refused every other client for
  // two minutes (a security review, 2026-12-07).
  const h = await startHarness('sqlite', { SERVER_HEADERS_TIMEOUT_MS: '1000', SERVER_REQUEST_TIMEOUT_MS: '2000' });
  const sockets: Socket[] = [];
  try {
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (h.app.server.address() as { port: number }).port;
    sockets.push(...idleSockets(port, 5, { paused: true })); // never read, never closed
    await until('5 connections open', 5_000, async () => (await openConnections(h)) === 5);
    // Timeout (1 s) + one check (200 ms) + the linger (RAW_ANSWER_LINGER_MS, 1 s), with room for a loaded host.
    await until('every connection closed', 15_000, async () => (await openConnections(h)) === 0);
  } finally {
    for (const s of sockets) s.destroy();
    await h.close();
  }
});

// Past either connection limit, the next connection is answered in the envelope and closed before
// any request on it is read. Before 2026-12-08, Node's own maxConnections dropped those past
// SERVER_MAX_CONNECTIONS unanswered: the one refusal outside the envelope.
const connectionLimits: Array<{ title: string; env: Record<string, string>; status: number; code: string; message: RegExp; limit: string; other: string }> = [
  {
    title: 'one address holds at most SERVER_MAX_CONNECTIONS_PER_ADDRESS connections: the next is answered 429',
    env: { SERVER_MAX_CONNECTIONS_PER_ADDRESS: '3' },
    status: 429,
    code: 'rate_limited',
    message: /Too many open connections from this address \(at most 3\)/,
    limit: 'address',
    other: 'server',
  },
  {
    title: 'past SERVER_MAX_CONNECTIONS open connections the next is answered 503',
    env: { SERVER_MAX_CONNECTIONS: '3', SERVER_MAX_CONNECTIONS_PER_ADDRESS: '0' },
    status: 503,
    code: 'service_unavailable',
    message: /as many connections open as it accepts \(3\)/,
    limit: 'server',
    other: 'address',
  },
];
for (const c of connectionLimits) {
  test(`${c.title} in the envelope and closed, its request never run; served again once one closes`, { timeout: 30_000 }, async () => {
    const h = await startHarness('sqlite', { ...c.env, COSTS: JSON.stringify({ echoHello: 10 }) });
    const sockets: Socket[] = [];
    try {
      await h.app.listen({ host: '127.0.0.1', port: 0 });
      const port = (h.app.server.address() as { port: number }).port;
      const open = (n: number, what: string) => until(what, 5_000, async () => (await openConnections(h)) === n);
      sockets.push(...idleSockets(port, 3));
      await open(3, '3 connections open');
      const a = await h.account({ credits: 1_000 });
      const echo = `GET /echo/v1/hello HTTP/1.1\r\nHost: x\r\nX-API-Key: ${a.apiKey}\r\nConnection: close\r\n\r\n`;
      const refused = await raw(port, echo);
      assert.equal(refused.status, c.status);
      assert.match(refused.headers, /retry-after: 1/i);
      assert.match(refused.headers, /x-content-type-options: nosniff/i);
      assert.match(refused.headers, /connection: close/i);
      const env = assertEnvelope(refused.body, c.code);
      assert.match(env.error.message, c.message);
      assert.match(refused.headers, new RegExp(`x-request-id: ${env.meta.requestId}`, 'i'));
      await open(3, 'the refused one closed');
      const charges = async () => ((await h.app.inject({ url: '/api/v1/usage', headers: { 'x-api-key': a.apiKey } })).json() as { items: Array<{ kind: string }> }).items.filter((e) => e.kind === 'charge').length;
      assert.equal(await charges(), 0, 'the refused request never ran');
      const metrics = await h.app.inject({ url: '/metrics' });
      assert.match(metrics.body, new RegExp(`^sdg_connections_refused_total\\{limit="${c.limit}"\\} 1$`, 'm'));
      assert.match(metrics.body, new RegExp(`^sdg_connections_refused_total\\{limit="${c.other}"\\} 0$`, 'm'));
      // One closes: a new connection is served, and counted: the next past 3 is refused again.
      sockets.pop()!.destroy();
      await open(2, '2 connections open');
      sockets.push(...idleSockets(port, 1));
      await open(3, '3 connections open again');
      assert.equal((await raw(port, echo)).status, c.status);
      sockets.pop()!.destroy();
      await open(2, '2 connections open again');
      assert.equal((await raw(port, echo)).status, 200);
      assert.equal(await charges(), 1, 'served (and charged) once under the limit');
    } finally {
      for (const s of sockets) s.destroy();
      await h.close();
    }
  });
}

test('the connections of an IPv6 /64 count as one address; IPv4-mapped and NAT64 addresses as their IPv4', () => {
  assert.equal(addressKey('2001:db8:1:2:aaaa::1'), addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'));
  assert.notEqual(addressKey('2001:db8:1:2::1'), addressKey('2001:db8:1:3::1'));
  assert.equal(addressKey('::ffff:192.0.2.7'), '192.0.2.7');
  assert.equal(addressKey('64:ff9b::192.0.2.7'), '192.0.2.7', 'NAT64: IPv4 clients stay apart');
  assert.notEqual(addressKey('64:ff9b::192.0.2.7'), addressKey('64:ff9b::192.0.2.8'));
  assert.equal(addressKey('fe80::1%eth0'), addressKey('fe80::2%eth0'));
  assert.equal(addressKey('192.0.2.7'), '192.0.2.7');
  assert.equal(addressKey(undefined), 'unknown');
});

test('SERVER_MAX_CONNECTIONS_PER_ADDRESS: a quarter of SERVER_MAX_CONNECTIONS, none behind a proxy (TRUST_PROXY), 0 for none', () => {
  assert.equal(loadConfig({}).server.maxConnectionsPerAddress, 256);
  assert.equal(loadConfig({ SERVER_MAX_CONNECTIONS: '100' }).server.maxConnectionsPerAddress, 25);
  assert.equal(loadConfig({ TRUST_PROXY: '1' }).server.maxConnectionsPerAddress, 0);
  assert.equal(loadConfig({ TRUST_PROXY: '1', SERVER_MAX_CONNECTIONS_PER_ADDRESS: '50' }).server.maxConnectionsPerAddress, 50);
  assert.throws(() => loadConfig({ SERVER_MAX_CONNECTIONS_PER_ADDRESS: '-1' }), /SERVER_MAX_CONNECTIONS_PER_ADDRESS/);
});

test('server limits are validated at start-up', () => {
  assert.equal(loadConfig({ SERVER_REQUEST_TIMEOUT_MS: '60000' }).server.requestTimeoutMs, 60_000);
  assert.throws(() => loadConfig({ SERVER_REQUEST_TIMEOUT_MS: '0' }), (e: Error) => e instanceof ConfigError && /SERVER_REQUEST_TIMEOUT_MS/.test(e.message));
  assert.throws(() => loadConfig({ SERVER_REQUEST_TIMEOUT_MS: '5000', SERVER_HEADERS_TIMEOUT_MS: '6000' }), /SERVER_HEADERS_TIMEOUT_MS/);
  assert.throws(() => loadConfig({ SERVER_MAX_CONNECTIONS: 'many' }), /SERVER_MAX_CONNECTIONS/);
});

test('download links: the signature is checked before the export is read, so a forged link costs the same whether it exists; a genuine one beyond the maximum TTL is refused', async () => {
  const secret = 's'.repeat(40);
  const secrets = { current: secret, previous: [] };
  const now = Date.UTC(2026, 0, 1);
  const row = { id: '7', status: 'completed', object_key: 'exports/acc_1/7.jsonl.gz', expired_at: null } as unknown as ExportRow;
  const reads: string[] = [];
  const find = async (id: string) => (reads.push(id), id === '7' ? row : undefined);
  const check = (id: string, expires: number, sig: string, startedMs = now - 3_600_000) => verifiedDownload(secrets, { id, expiresText: String(expires), sig, nowMs: now, maxTtlSeconds: 900, find, startedMs });
  const within = Math.floor(now / 1000) + 900;
  const link = new URL(`http://x${signDownload(secret, '7', now, 900).path}`);
  assert.equal(await check('7', Number(link.searchParams.get('expires')), link.searchParams.get('sig')!), row);
  assert.deepEqual(reads.splice(0), ['7']);
  // Forged: refused without reading any export, existing or not.
  for (const id of ['7', '8']) await assert.rejects(check(id, within, 'A'.repeat(43)), { code: 'not_found' });
  await assert.rejects(check('8', Number(link.searchParams.get('expires')), link.searchParams.get('sig')!), { code: 'not_found' }, 'another id');
  assert.deepEqual(reads.splice(0), []);
  const far = Math.floor(now / 1000) + 10 * 365 * 24 * 3600;
  const farSig = createHmac('sha256', secret).update('export-download-v2\0').update('7').update('\0').update(String(far)).digest('base64url');
  await assert.rejects(check('7', far, farSig), { code: 'not_found' });
  // A link of the old form (the object key signed too), made before this process started: still
  // works within its TTL; after the TTL since the start, none of that form reads an export.
  const legacy = (expires: number) => createHmac('sha256', secret).update('export-download\0').update('7').update('\0').update(row.object_key!).update('\0').update(String(expires)).digest('base64url');
  assert.equal(await check('7', within, legacy(within), now), row);
  assert.deepEqual(reads.splice(0), ['7']);
  await assert.rejects(check('7', within, legacy(within), now - 3_600_000), { code: 'not_found' });
  assert.deepEqual(reads.splice(0), []);
});
