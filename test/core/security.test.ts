// One security suite run on every documented route: no key, unknown key, malformed key, revoked key
// all answer 401 in the envelope, and nothing is charged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { revokeKey } from '../../src/accounts/accounts-repo.js';
import { generateApiKey } from '../../src/accounts/api-keys.js';
import { defaultCosts } from '../../src/config/costs.js';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { backends } from '../helpers/backends.js';
import { errorOf, startHarness, type Harness, type TestAccount } from '../helpers/harness.js';

interface Operation {
  method: string;
  url: string;
  operationId: string;
}

function documentedOperations(doc: { paths?: Record<string, Record<string, { operationId?: string }>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      if (!op.operationId) continue;
      ops.push({ method: method.toUpperCase(), url: path.replace(/\{[^}]+\}/g, '1234567890'), operationId: op.operationId });
    }
  }
  return ops;
}

for (const backend of backends()) {
  describe(`security suite on every route (${backend})`, () => {
    let h: Harness;
    let victim: TestAccount;
    let ops: Operation[];
    before(async () => {
      // Every route costs something here, so a wrongly charged call would show in the balance.
      h = await startHarness(backend, { COSTS: JSON.stringify(Object.fromEntries(Object.keys(defaultCosts).map((k) => [k, 10]))) });
      victim = await h.account({ credits: 1_000 });
      await revokeKey(h.deps.store.db, victim.keyId);
      ops = documentedOperations(h.app.swagger() as never);
    });
    after(() => h.close());

    test('the OpenAPI document lists the account, echo and other routes', () => {
      const ids = ops.map((o) => o.operationId);
      for (const id of ['getCreditsBalance', 'createApiKey', 'listApiKeys', 'revokeApiKey', 'listPlans', 'listUsage', 'echoHello']) {
        assert.ok(ids.includes(id), `${id} is documented`);
      }
    });

    const cases: Array<[string, (v: TestAccount) => Record<string, string>, string]> = [
      ['no key', () => ({}), 'missing_api_key'],
      ['empty key', () => ({ 'x-api-key': '' }), 'missing_api_key'],
      ['unknown key', () => ({ 'x-api-key': generateApiKey().key }), 'invalid_api_key'],
      ['malformed key', () => ({ 'x-api-key': "sdg_live_' or 1=1 --" }), 'invalid_api_key'],
      ['revoked key', (v) => ({ 'x-api-key': v.apiKey }), 'invalid_api_key'],
    ];
    for (const [name, headers, code] of cases) {
      test(`${name}: 401 ${code} on every route, nothing charged`, async () => {
        assert.ok(ops.length >= 7);
        for (const op of ops) {
          const res = await h.app.inject({
            method: op.method as 'GET',
            url: op.url,
            headers: { ...headers(victim), ...(op.method === 'POST' ? { 'content-type': 'application/json' } : {}) },
            ...(op.method === 'POST' ? { payload: '{}' } : {}),
          });
          assert.equal(res.statusCode, 401, `${op.method} ${op.url}: ${res.body}`);
          assert.equal(errorOf(res).code, code, `${op.method} ${op.url}`);
          assert.equal(res.headers['x-credits-charged'], undefined);
        }
        assert.equal((await getBalance(h.deps.store.db, victim.accountId))!.balance, 1_000);
        assert.equal(await ledgerSum(h.deps.store.db, victim.accountId), 1_000);
      });
    }

    test('public routes need no key: health, readiness, OpenAPI 3.1, docs, metrics', async () => {
      assert.equal((await h.app.inject({ url: '/healthz' })).statusCode, 200);
      assert.equal((await h.app.inject({ url: '/readyz' })).statusCode, 200);
      const doc = await h.app.inject({ url: '/openapi.json' });
      assert.equal(doc.statusCode, 200);
      assert.equal(JSON.parse(doc.body).openapi, '3.1.0');
      const docs = await h.app.inject({ url: '/docs/' });
      assert.equal(docs.statusCode, 200);
      assert.match(docs.body, /swagger/i);
      const m = await h.app.inject({ url: '/metrics' });
      assert.equal(m.statusCode, 200);
      assert.match(m.body, /sdg_http_requests_total/);
    });

    test('logs never contain the API key', async () => {
      const lines: string[] = [];
      const { buildApp } = await import('../../src/http/app.js');
      const { Writable } = await import('node:stream');
      const stream = new Writable({
        write(chunk, _enc, cb) {
          lines.push(String(chunk));
          cb();
        },
      });
      const app = await buildApp(h.deps, { logger: { level: 'trace', stream } });
      const a = await h.account();
      const ok = await app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': a.apiKey } });
      const bad = await app.inject({ url: '/api/v1/usage?limit=zz', headers: { 'x-api-key': a.apiKey } });
      await app.close();
      // Each answer is logged at debug, under the request id the caller was given.
      const logged = lines.map((l) => JSON.parse(l) as { msg: string; requestId?: string; status?: number; route?: string });
      for (const [res, status] of [[ok, 200], [bad, 400]] as const) {
        const line = logged.find((l) => l.requestId === res.headers['x-request-id']);
        assert.equal(line?.msg, 'request completed');
        assert.equal(line?.status, status);
      }
      assert.ok(!lines.join('').includes(a.apiKey));
    });
  });
}
