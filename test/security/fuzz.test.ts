// Fuzzing every documented operation (from /openapi.json) with malformed path, query, header and body
// values: never a 5xx, every 4xx in the envelope with a request id, and nothing charged for a failure
// (the balance moves only by what 2xx answers said they charged, and the ledger sums to it).
// Seeded and bounded: about two thousand requests.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { backends } from '../helpers/backends.js';
import { startHarness, type Harness, type TestAccount } from '../helpers/harness.js';

interface Op {
  method: string;
  path: string;
  params: { name: string; in: string }[];
  hasBody: boolean;
}

function operations(doc: { paths?: Record<string, Record<string, { operationId?: string; parameters?: { name: string; in: string }[]; requestBody?: unknown }>> }): Op[] {
  const ops: Op[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      if (!op.operationId) continue;
      ops.push({ method: method.toUpperCase(), path, params: op.parameters ?? [], hasBody: op.requestBody !== undefined });
    }
  }
  return ops;
}

// mulberry32: a small seeded generator, so a failure replays exactly.
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Raw (already URL-encoded or deliberately malformed) values for path and query positions.
const urlValues = ['%ZZ', '%C0%AF', '%ED%A0%80', '%00', '%', '', '-1', '0', '1e309', 'NaN', '9'.repeat(400), 'a'.repeat(5000), '%F0%9F%92%A9', '..%2F..%2Fetc', 'null', 'true', '%22%3Cscript%3E', '%EF%BF%BF', '[]', '{}'];
// JSON bodies: wrong types, deep and huge values, NUL and lone surrogates (as JSON escapes).
const bodies = [
  '',
  'null',
  '[]',
  '"text"',
  '{',
  '{"a":1,}',
  '{"items":"x"}',
  '{"items":[{"username":"\\u0000"}]}',
  '{"name":"\\ud800"}',
  '{"items":[{"username":"\\udfff"}]}',
  '{"startDate":"\\u0000","endDate":1}',
  '{"startDate":[],"endDate":{}}',
  '{"socialUserIds":[' + '"1",'.repeat(2000) + '"1"]}',
  '['.repeat(5000) + ']'.repeat(5000),
  '{"a":' + '{"a":'.repeat(3000) + '1' + '}'.repeat(3001),
  '{"name":"' + 'x'.repeat(200_000) + '"}',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '{"items":[' + '{"socialUserId":"-1"},'.repeat(150) + '{"socialUserId":"-1"}]}',
  '{"name":1e999}',
];
const headerValues = ['', ' ', 'a'.repeat(8000), 'sdg_live_', '\t', 'null', 'ключ', '%ZZ'];

for (const backend of backends()) {
  describe(`fuzz every operation (${backend})`, () => {
    let h: Harness;
    let acct: TestAccount;
    let ops: Op[];
    before(async () => {
      h = await startHarness(backend);
      acct = await h.account({ credits: 1_000_000 });
      ops = operations(JSON.parse((await h.app.inject({ method: 'GET', url: '/openapi.json' })).body));
    });
    after(() => h.close());

    test('malformed values: no 5xx, the envelope on every 4xx, nothing charged for a failure', { timeout: 60_000 }, async () => {
      assert.ok(ops.length >= 15, `${ops.length} operations`);
      const rand = prng(13);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
      const db = h.deps.store.db;
      const start = (await getBalance(db, acct.accountId))!.balance;
      let chargedBy2xx = 0;
      let sent = 0;
      const started = Date.now();

      for (const op of ops) {
        for (let round = 0; round < 70; round++) {
          const path = op.path.replace(/\{[^}]+\}/g, () => (rand() < 0.7 ? pick(urlValues) : '1234567890'));
          const query = op.params
            .filter((p) => p.in === 'query')
            .filter(() => rand() < 0.6)
            .map((p) => `${encodeURIComponent(p.name)}=${pick(urlValues)}`);
          if (rand() < 0.2) query.push(`${pick(urlValues)}=${pick(urlValues)}`);
          const url = query.length ? `${path}?${query.join('&')}` : path;
          const headers: Record<string, string> = { 'x-api-key': rand() < 0.8 ? acct.apiKey : pick(headerValues) };
          if (rand() < 0.3) headers['idempotency-key'] = pick(headerValues);
          if (rand() < 0.2) headers['accept'] = pick(headerValues);
          let payload: string | undefined;
          if (op.hasBody || rand() < 0.1) {
            payload = pick(bodies);
            headers['content-type'] = rand() < 0.9 ? 'application/json' : pick(['text/plain', 'application/json; charset=latin1', 'multipart/form-data', '']);
          }
          const res = await h.app.inject({ method: op.method as 'GET', url, headers, ...(payload !== undefined ? { payload } : {}) });
          sent += 1;
          const what = `${op.method} ${url.slice(0, 120)} body=${(payload ?? '').slice(0, 60)} → ${res.statusCode} ${res.body.slice(0, 200)}`;
          assert.ok(res.statusCode < 500, what);
          const charged = Number(res.headers['x-credits-charged'] ?? 0);
          if (res.statusCode >= 200 && res.statusCode < 300) {
            chargedBy2xx += charged;
            continue;
          }
          assert.equal(charged, 0, what);
          const env = JSON.parse(res.body) as { error?: { code?: string; message?: string }; meta?: { requestId?: string } };
          assert.equal(typeof env.error?.code, 'string', what);
          assert.equal(typeof env.error?.message, 'string', what);
          assert.match(env.meta?.requestId ?? '', /\S/, what);
          assert.equal(res.headers['x-request-id'], env.meta?.requestId, what);
        }
      }
      const end = (await getBalance(db, acct.accountId))!.balance;
      assert.equal(end, start - chargedBy2xx, 'the balance moved only by what 2xx answers charged');
      assert.equal(await ledgerSum(db, acct.accountId), end);
      assert.ok(sent <= 3_000 && Date.now() - started < 60_000, `${sent} requests in ${Date.now() - started} ms`);
    });
  });
}
