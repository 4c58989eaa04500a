// SOURCE=x end to end: the gateway's endpoints over the X source, built from configuration.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { getBalance } from '../../src/credits/credits-repo.js';
import { errorOf, json, startHarness, type Harness } from '../helpers/harness.js';
import { startFixtureServer, TOKEN, type FixtureServer } from './helpers.js';
import { notReadyState } from '../helpers/not-ready.js';

describe('the gateway on SOURCE=x', () => {
  let h: Harness;
  let x: FixtureServer;
  before(async () => {
    x = await startFixtureServer();
    h = await startHarness('sqlite', { SOURCE: 'x', X_BEARER_TOKEN: TOKEN, X_BASE_URL: x.baseUrl, SOURCE_TIMEOUT_MS: '2000' });
  });
  after(async () => {
    await h.close();
    await x.close();
  });

  test('a tweet is fetched from X, mapped, charged, then served from the store', async () => {
    x.on('/2/tweets/1850000000000000001', { file: 'tweet-long-note.json' });
    const a = await h.account({ credits: 1000 });
    const r = await h.app.inject({ url: '/social/v1/tweets/1850000000000000001', headers: { 'x-api-key': a.apiKey } });
    assert.equal(r.statusCode, 200, r.body);
    const body = json<{ data: { id: string; text: string }; meta: { cached: boolean } }>(r);
    assert.equal(body.data.id, '1850000000000000001');
    assert.equal(body.meta.cached, false);
    assert.equal(x.seen.at(-1)?.authorization, `Bearer ${TOKEN}`);
    const again = await h.app.inject({ url: '/social/v1/tweets/1850000000000000001', headers: { 'x-api-key': a.apiKey } });
    assert.equal(json<{ meta: { cached: boolean } }>(again).meta.cached, true);
    assert.equal(x.count('/2/tweets/1850000000000000001'), 1);
    assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 800);
  });

  test("X's not-found partial error is 404; its 429 is 503 with Retry-After; neither is charged", async () => {
    const a = await h.account({ credits: 1000 });
    x.on('/2/tweets/1999999999999999999', { file: 'errors-tweet-not-found.json' });
    const nf = await h.app.inject({ url: '/social/v1/tweets/1999999999999999999', headers: { 'x-api-key': a.apiKey } });
    assert.equal(nf.statusCode, 404);
    assert.equal(errorOf(nf).code, 'not_found');
    const reset = Math.ceil(Date.now() / 1000) + 120;
    x.on('/2/users/by/username/limited', { status: 429, file: 'problem-429.json', headers: { 'x-rate-limit-limit': '300', 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(reset) } });
    const rl = await h.app.inject({ url: '/social/v1/users/by/username/limited', headers: { 'x-api-key': a.apiKey } });
    assert.equal(rl.statusCode, 503);
    assert.equal(errorOf(rl).code, 'upstream_unavailable');
    assert.ok(Number(rl.headers['retry-after']) > 60);
    assert.ok(!rl.body.includes(TOKEN) && !nf.body.includes(TOKEN));
    assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 1000);
  });

  test("X's 401 is 502 upstream_error naming X_BEARER_TOKEN, asked once (not retried, no circuit), not charged", async () => {
    const a = await h.account({ credits: 1000 });
    x.on('/2/tweets/1850000000000000401', { status: 401, file: 'problem-401.json', headers: { 'content-type': 'application/problem+json' } });
    for (let i = 0; i < 6; i++) {
      const r = await h.app.inject({ url: '/social/v1/tweets/1850000000000000401', headers: { 'x-api-key': a.apiKey } });
      assert.equal(r.statusCode, 502, r.body);
      assert.equal(errorOf(r).code, 'upstream_error');
      assert.equal(errorOf(r).message, 'The data source refused the request: X rejected the bearer token (HTTP 401): check X_BEARER_TOKEN.');
      assert.ok(!r.body.includes(TOKEN));
    }
    assert.equal(x.count('/2/tweets/1850000000000000401'), 6, 'one request per call: never retried, and six refusals do not open the circuit');
    assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 1000);
  });

  test("X's 403 and a 400 naming a parameter are 502 upstream_error saying what X refused", async () => {
    const a = await h.account({ credits: 1000 });
    // (Not the username endpoint: the 429 above holds it back until its reset.)
    x.on('/2/tweets/1850000000000000403', { status: 403, file: 'problem-403-client-not-enrolled.json' });
    const forbidden = await h.app.inject({ url: '/social/v1/tweets/1850000000000000403', headers: { 'x-api-key': a.apiKey } });
    assert.equal(forbidden.statusCode, 502, forbidden.body);
    assert.match(errorOf(forbidden).message, /HTTP 403 \(client-forbidden\)\): check X_BEARER_TOKEN and that its app's project and API plan include this endpoint/);
    x.on('/2/communities/1471580197908586507', { status: 400, json: { errors: [{ parameters: { 'community.fields': ['x'] }, message: 'The `community.fields` query parameter value [x] is not one of [id]' }], title: 'Invalid Request' } });
    const bad = await h.app.inject({ url: '/social/v1/communities/1471580197908586507', headers: { 'x-api-key': a.apiKey } });
    assert.equal(bad.statusCode, 502, bad.body);
    assert.match(errorOf(bad).message, /rejected parameter: community\.fields\): The `community\.fields` query parameter value \[x\] is not one of \[id\]/);
    assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 1000);
  });
});

describe('/readyz on SOURCE=x', () => {
  let x: FixtureServer;
  before(async () => {
    x = await startFixtureServer();
  });
  after(async () => {
    await x.close();
  });
  const readyz = async (env: Record<string, string>) => {
    const h = await startHarness('sqlite', { SOURCE: 'x', X_BEARER_TOKEN: TOKEN, SOURCE_TIMEOUT_MS: '2000', ...env });
    try {
      const first = await h.app.inject({ url: '/readyz' });
      const second = await h.app.inject({ url: '/readyz' });
      const remote = await h.app.inject({ url: '/readyz', remoteAddress: '203.0.113.9' });
      return { first, second, remote };
    } finally {
      await h.close();
    }
  };

  test('ready when X answers the probe; the answer is kept, not asked again at once', async () => {
    x.on('/2/users/by/username/X', { file: 'user-post-era.json' });
    const before = x.count('/2/users/by/username/X');
    const { first, second } = await readyz({ X_BASE_URL: x.baseUrl });
    assert.equal(first.statusCode, 200, first.body);
    assert.equal(second.statusCode, 200);
    assert.equal(x.count('/2/users/by/username/X'), before + 1);
  });

  test('not ready, naming the source and X_BEARER_TOKEN, when X rejects the token', async () => {
    x.on('/2/users/by/username/X', { status: 401, file: 'problem-401.json' });
    const { first, second } = await readyz({ X_BASE_URL: x.baseUrl });
    assert.equal(first.statusCode, 503, first.body);
    assert.deepEqual(notReadyState(first), { status: 'source unavailable', source: 'x', reason: 'X rejected the bearer token (HTTP 401): check X_BEARER_TOKEN' });
    assert.equal(second.statusCode, 503);
  });

  test('not ready when X cannot be reached', async () => {
    const port = await closedPort();
    const { first, remote } = await readyz({ X_BASE_URL: `http://127.0.0.1:${port}` });
    assert.equal(first.statusCode, 503, first.body);
    const body = notReadyState(first);
    assert.equal(body.source, 'x');
    assert.match(body.reason!, /X could not be reached/);
    // The reason names the source's address: a caller that may not read /metrics gets the status only.
    assert.equal(remote.statusCode, 503);
    assert.deepEqual(notReadyState(remote), { status: 'source unavailable', source: 'x' });
  });
});

async function closedPort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const probe = net.createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

