// Download links never take a host the operator did not allow, and TRUST_PROXY believes only the
// configured hops.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { drainBulkWork } from '../../src/wiring/drain-jobs.js';
import { backends } from '../helpers/backends.js';
import { json, startHarness, type TestAccount } from '../helpers/harness.js';
import { BASE, bulkHarness, call, HOUR, T0, type BulkHarness } from '../bulk/helpers.js';

for (const backend of backends()) {
  describe(`download links and the Host header (${backend})`, () => {
    let b: BulkHarness;
    let a: TestAccount;
    let exportId: string;
    before(async () => {
      b = await bulkHarness(backend, { PORT: '8080', ALLOWED_HOSTS: 'gw.example.test,localhost:8080' });
      a = await b.h.account();
      await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items: [{ socialUserId: b.sample.userIds[0] }] });
      await drainBulkWork(b.h.deps);
      const res = await call(b.h, a, 'POST', `${BASE}/exports/generate`, { startDate: new Date(T0 - HOUR).toISOString(), endDate: new Date(T0).toISOString() });
      exportId = json<{ data: { id: string } }>(res).data.id;
      await drainBulkWork(b.h.deps, { crawl: false });
    });
    after(() => b.h.close());

    const linkFor = async (host: string) => {
      const res = await b.h.app.inject({ method: 'GET', url: `${BASE}/exports/${exportId}/download`, headers: { 'x-api-key': a.apiKey, host } });
      assert.equal(res.statusCode, 200, res.body);
      return new URL(json<{ data: { url: string } }>(res).data.url);
    };

    test('an allowed Host is used; a forged one falls back to the first allowed host', async () => {
      assert.equal((await linkFor('localhost:8080')).host, 'localhost:8080');
      assert.equal((await linkFor('gw.example.test')).host, 'gw.example.test');
      const forged = await linkFor('attacker.example/evil?x=');
      assert.equal(forged.host, 'gw.example.test');
      assert.equal((await linkFor('attacker.example')).host, 'gw.example.test');
    });
  });
}

test('the default allow-list is the configured HOST:PORT and localhost', () => {
  assert.deepEqual(loadConfig({ HOST: '10.0.0.5', PORT: '9000' }).allowedHosts, ['10.0.0.5:9000', 'localhost:9000', '127.0.0.1:9000']);
  assert.deepEqual(loadConfig({ HOST: '0.0.0.0', PORT: '9000' }).allowedHosts, ['localhost:9000', '127.0.0.1:9000']);
});

test('TRUST_PROXY: false, a hop count or addresses; true means the one proxy in front', () => {
  assert.equal(loadConfig({}).trustProxy, false);
  assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, 1);
  assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
  assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16' }).trustProxy, ['10.0.0.1', '192.168.0.0/16']);
  assert.throws(() => loadConfig({ TRUST_PROXY: 'yes please' }), /TRUST_PROXY/);
});

describe('X-Forwarded-For with one trusted hop', () => {
  test('only the hop the proxy added is believed: a client-forged earlier entry is not its address', async () => {
    const h = await startHarness('sqlite', { TRUST_PROXY: '1', AUTH_FAILURES_PER_MINUTE: '2' });
    try {
      // The client forges a new address each time; the proxy (127.0.0.1) appends the real one.
      const codes: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await h.app.inject({ method: 'GET', url: '/api/v1/credits/balance', headers: { 'x-forwarded-for': `198.51.100.${i}, 203.0.113.7` } });
        codes.push(res.statusCode);
      }
      assert.deepEqual(codes, [401, 401, 429, 429]);
    } finally {
      await h.close();
    }
  });
});

test('X-Forwarded-Proto under TRUST_PROXY: https or http, never another scheme in a link', async () => {
  const { default: Fastify } = await import('fastify');
  const { linkBase } = await import('../../src/http/link-base.js');
  // One trusted hop, as app.ts gives Fastify TRUST_PROXY=1 (a plain number trusts no hop in Fastify 5.12).
  const app = Fastify({ trustProxy: (_address: string, hop: number) => hop < 1 });
  const base = linkBase({ publicBaseUrl: undefined, allowedHosts: ['gw.example.test'] });
  app.get('/base', (request) => ({ base: base(request) }));
  try {
    const baseFor = async (proto: string) =>
      json<{ base: string }>(await app.inject({ url: '/base', remoteAddress: '127.0.0.1', headers: { host: 'gw.example.test', 'x-forwarded-proto': proto } })).base;
    assert.equal(await baseFor('https'), 'https://gw.example.test');
    assert.equal(await baseFor('http'), 'http://gw.example.test');
    assert.equal(await baseFor('javascript'), 'http://gw.example.test');
    assert.equal(await baseFor('gopher'), 'http://gw.example.test');
  } finally {
    await app.close();
  }
});
