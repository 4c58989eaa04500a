// /metrics is not public (a bearer token, else loopback only) and /docs carries security headers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { errorOf, startHarness, type Harness } from '../helpers/harness.js';

describe('/metrics with METRICS_TOKEN', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('sqlite', { METRICS_TOKEN: 'm'.repeat(24) });
  });
  after(() => h.close());

  test('answers only the bearer of the token, from any address', async () => {
    const none = await h.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(none.statusCode, 401);
    assert.match(errorOf(none).message, /METRICS_TOKEN/);
    const wrong = await h.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${'m'.repeat(23)}x` } });
    assert.equal(wrong.statusCode, 401);
    const ok = await h.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9', headers: { authorization: `Bearer ${'m'.repeat(24)}` } });
    assert.equal(ok.statusCode, 200);
    assert.match(ok.body, /# HELP/);
  });

  test('a short token is refused at start-up', () => {
    assert.throws(() => loadConfig({ METRICS_TOKEN: 'short' }), /METRICS_TOKEN/);
  });
});

describe('/metrics without a token, /docs', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('sqlite');
  });
  after(() => h.close());

  test('/metrics answers loopback callers only', async () => {
    assert.equal((await h.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' })).statusCode, 200);
    const remote = await h.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9' });
    assert.equal(remote.statusCode, 401);
    assert.match(errorOf(remote).message, /loopback/);
  });

  test('/metrics behind a proxy on the same host: loopback is the proxy, the client is not', async () => {
    const proxied = await startHarness('sqlite', { TRUST_PROXY: '1' });
    try {
      const through = await proxied.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.9' } });
      assert.equal(through.statusCode, 401, 'a client the proxy forwards');
      assert.equal((await proxied.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' })).statusCode, 200, 'a scraper on the host');
      assert.equal((await proxied.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '203.0.113.9', headers: { 'x-forwarded-for': '127.0.0.1' } })).statusCode, 401, 'a remote connection naming loopback');
    } finally {
      await proxied.close();
    }
  });

  test('/docs has a CSP forbidding framing, nosniff and no referrer', async () => {
    for (const url of ['/docs', '/docs/static/index.html']) {
      const res = await h.app.inject({ method: 'GET', url });
      const final = res.statusCode === 302 ? await h.app.inject({ method: 'GET', url: `/docs/${String(res.headers.location).replace(/^.*\//, '')}` }) : res;
      assert.equal(final.statusCode, 200, url);
      const csp = String(final.headers['content-security-policy'] ?? '');
      assert.match(csp, /frame-ancestors 'none'/, url);
      assert.match(csp, /script-src 'self'/, url);
      assert.doesNotMatch(csp, /upgrade-insecure-requests/);
      assert.equal(final.headers['x-content-type-options'], 'nosniff');
      assert.equal(final.headers['referrer-policy'], 'no-referrer');
    }
  });

  test('/docs answers a path it does not serve in the error envelope, with the request id', async () => {
    for (const url of ['/docs/nope.js', '/docs/static/nope.js', '/docs/static/..%2F..%2Fpackage.json']) {
      const res = await h.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 404, url);
      assert.equal(errorOf(res).code, 'not_found', url); // errorOf also checks meta.requestId
    }
  });
});
