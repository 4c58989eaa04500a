// A keyed call's 2xx is written to Node's response directly (keyed-headers.ts), unless CORS is on,
// when Fastify's send writes it (the plugin's hook adds headers of its own). Both must give a caller
// the same answer: the contract's headers (section 4), a Content-Length equal to the body's bytes
// (ASCII, beyond ASCII, serialized), over a real socket; and the error answers, which Fastify always
// sends, carry the rate limit's headers as before.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { demoNoon } from '../helpers/social.js';

const APP = 'https://app.example.com';
// Headers any answer has from Node or that only CORS adds.
const NOT_COMPARED = new Set(['date', 'connection', 'keep-alive', 'vary', 'access-control-allow-origin', 'access-control-expose-headers', 'access-control-allow-credentials']);

interface Answer {
  status: number;
  headers: Map<string, string>;
  bytes: Buffer;
}

async function get(base: string, path: string, key: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(`${base}${path}`, { ...init, headers: { 'x-api-key': key, origin: APP, ...(init.headers as Record<string, string>) } });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: new Map([...res.headers].map(([k, v]) => [k.toLowerCase(), v])), bytes };
}

describe('keyed answers, written directly and through Fastify', () => {
  const { sample, tweak, demo } = demoNoon();
  const sides: Array<{ name: string; h: Harness; a: TestAccount; base: string }> = [];
  let ascii = '';
  let wide = '';

  before(async () => {
    // A tweet whose JSON is ASCII and one beyond it (answered from its UTF-8 bytes).
    for (const userId of sample.userIds) {
      for (const t of (await demo.getUserTweets(userId, { limit: 100 })).items) {
        const text = JSON.stringify(t);
        if (!ascii && !/[\u0080-\uffff]/.test(text)) ascii = t.id;
        if (!wide && /[\u0100-\uffff]/.test(text)) wide = t.id;
      }
      if (ascii && wide) break;
    }
    for (const [name, env] of [
      ['direct', {}],
      ['through Fastify (CORS on)', { CORS_ORIGINS: APP }],
    ] as const) {
      const h = await startHarness('sqlite', { ...env, COSTS: JSON.stringify({ getTweet: 100 }) }, tweak);
      await h.app.listen({ host: '127.0.0.1', port: 0 });
      const a = await h.account({ credits: 1_000 });
      sides.push({ name, h, a, base: `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}` });
    }
  });
  after(async () => {
    for (const s of sides) await s.h.close();
  });

  test('the same headers and a Content-Length equal to the bytes sent, for stored tweets (ASCII and beyond), a fetched one, and a serialized answer', async () => {
    const paths = [`/social/v1/tweets/${ascii}`, `/social/v1/tweets/${ascii}`, `/social/v1/tweets/${wide}`, `/social/v1/tweets/${wide}`, '/echo/v1/hello', '/api/v1/credits/balance'];
    const seen: Array<Array<[string, string[]]>> = [];
    for (const s of sides) {
      const names: Array<[string, string[]]> = [];
      for (const path of paths) {
        const r = await get(s.base, path, s.a.apiKey);
        assert.equal(r.status, 200, `${s.name} ${path}`);
        assert.equal(Number(r.headers.get('content-length')), r.bytes.length, `${s.name} ${path}: Content-Length`);
        const body = JSON.parse(r.bytes.toString('utf8')) as { meta?: { requestId?: string }; requestId?: string };
        assert.equal(r.headers.get('x-request-id'), body.meta?.requestId ?? body.requestId, `${s.name} ${path}: the body's request id`);
        assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
        assert.equal(r.headers.get('cache-control'), 'no-store');
        for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-credits-charged', 'x-credits-remaining']) assert.match(r.headers.get(h) ?? '', /^\d+$/, `${s.name} ${path}: ${h}`);
        if (s.name !== 'direct') assert.equal(r.headers.get('access-control-allow-origin'), APP);
        names.push([path, [...r.headers.keys()].filter((k) => !NOT_COMPARED.has(k)).sort()]);
      }
      seen.push(names);
      // Charged: two cached reads of each tweet... and the first read of each, fetched: 4 × 100.
      assert.equal((await getBalance(s.h.deps.store.db, s.a.accountId))!.balance, 600);
      assert.equal(await ledgerSum(s.h.deps.store.db, s.a.accountId), 600);
    }
    assert.deepEqual(seen[0], seen[1], 'the same headers either way');
    // The wide tweet's bytes are beyond ASCII: its Content-Length is not its length in characters.
    const r = await get(sides[0]!.base, `/social/v1/tweets/${wide}`, sides[0]!.a.apiKey);
    assert.notEqual(r.bytes.length, r.bytes.toString('utf8').length);
  });

  test('error answers carry the rate limit and credit headers on both', async () => {
    for (const s of sides) {
      const bad = await get(s.base, '/social/v1/tweets/not-a-number', s.a.apiKey);
      assert.equal(bad.status, 400);
      const broke = await startBroke(s.h);
      const refused = await get(s.base, `/social/v1/tweets/${ascii}`, broke.apiKey);
      assert.equal(refused.status, 402);
      for (const r of [bad, refused]) {
        for (const h of ['x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-credits-charged', 'x-credits-remaining']) assert.ok(r.headers.get(h), `${s.name} ${r.status}: ${h}`);
        assert.equal(r.headers.get('x-credits-charged'), '0');
        assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
        assert.equal(Number(r.headers.get('content-length')), r.bytes.length);
      }
    }
  });
});

const startBroke = (h: Harness): Promise<TestAccount> => h.account({ credits: 10 });

describe('keyed answers whose headers moved: a 429 and an idempotent replay', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('sqlite');
  });
  after(() => h.close());

  test('a refused call (429) carries the rate limit headers and Retry-After; a replayed POST carries them and its credit headers', async () => {
    const slow = await h.account({ rateLimitPerMinute: 2 });
    const calls = [];
    for (let i = 0; i < 3; i++) calls.push(await h.app.inject({ url: '/echo/v1/hello', headers: { 'x-api-key': slow.apiKey } }));
    assert.deepEqual(
      calls.map((r) => r.statusCode),
      [200, 200, 429],
    );
    const refused = calls[2]!;
    assert.equal(refused.headers['ratelimit-limit'], '2');
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    assert.match(String(refused.headers['ratelimit-reset']), /^\d+$/);
    assert.match(String(refused.headers['retry-after']), /^\d+$/);
    assert.equal(refused.headers['x-credits-charged'], '0');
    assert.equal(refused.headers['x-request-id'], (JSON.parse(refused.body) as { meta: { requestId: string } }).meta.requestId);

    const a = await h.account({});
    const post = () => h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': a.apiKey, 'idempotency-key': 'moved-headers' }, payload: {} });
    const first = await post();
    const replay = await post();
    assert.equal(first.statusCode, 201);
    assert.equal(replay.statusCode, 201);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    for (const r of [first, replay]) {
      for (const name of ['x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-credits-charged', 'x-credits-remaining']) assert.match(String(r.headers[name] ?? ''), /\S/, `${name}`);
      assert.equal(r.headers['cache-control'], 'no-store');
    }
    assert.notEqual(replay.headers['x-request-id'], first.headers['x-request-id']);
    assert.ok(Number(replay.headers['ratelimit-remaining']) < Number(replay.headers['ratelimit-limit']), 'the replay drew from the minute too');
  });
});
