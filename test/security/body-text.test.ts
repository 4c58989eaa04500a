// A NUL (U+0000) or a lone surrogate in a JSON body's string is a 400 naming the field on both
// stores. Postgres refuses a NUL in text: `{"name":"\u0000"}` for a new API key answered 500 there,
// and was stored on SQLite; a lone surrogate (`\ud800`) was stored as U+FFFD, not as sent.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { registerJsonBodyParser } from '../../src/http/json-body.js';
import { backends } from '../helpers/backends.js';
import { errorOf, startHarness, type Harness, type TestAccount } from '../helpers/harness.js';

for (const backend of backends()) {
  describe(`NUL in a JSON body (${backend})`, () => {
    let h: Harness;
    let a: TestAccount;
    before(async () => {
      h = await startHarness(backend);
      a = await h.account();
    });
    after(() => h.close());
    const post = (url: string, payload: string) =>
      h.app.inject({ method: 'POST', url, headers: { 'x-api-key': a.apiKey, 'content-type': 'application/json' }, payload });
    const keyCount = async () => (JSON.parse((await h.app.inject({ url: '/api/v1/api-keys', headers: { 'x-api-key': a.apiKey } })).body) as { items: unknown[] }).items.length;

    test('each body field that can hold text: 400 naming it, nothing made, nothing charged', async () => {
      const cases: Array<[string, string, string]> = [
        ['/api/v1/api-keys', '{"name":"a\\u0000b"}', 'body.name'],
        ['/api/v1/api-keys', '{"na\\u0000me":"x"}', 'body'],
        ['/social/v1/bulk-export/watchlist/batch', '{"items":[{"username":"ok_name"},{"username":"x\\u0000"}]}', 'body.items.1.username'],
        ['/social/v1/bulk-export/watchlist/batch-remove', '{"socialUserIds":["1\\u0000"]}', 'body.socialUserIds.0'],
        ['/social/v1/bulk-export/exports/generate', '{"startDate":"2026-11-19T00:00:00Z\\u0000","endDate":"2026-11-20T00:00:00Z"}', 'body.startDate'],
      ];
      const lone: Array<[string, string, string]> = [
        ['/api/v1/api-keys', '{"name":"a\\ud800"}', 'body.name'],
        ['/api/v1/api-keys', '{"name":"\\uDC00b"}', 'body.name'],
        ['/api/v1/api-keys', '{"name":"x\\ud83d\\ude00\\ud83d"}', 'body.name'],
      ];
      const keys = await keyCount();
      for (const [url, body, field] of cases) {
        const r = await post(url, body);
        assert.equal(r.statusCode, 400, `${url} ${body}: ${r.body}`);
        const e = errorOf(r);
        assert.equal(e.code, 'invalid_request');
        assert.deepEqual(e.details, { fields: [{ field, message: 'holds a NUL character' }] }, body);
        assert.equal(r.headers['x-credits-charged'], '0');
        assert.match(String(r.headers['x-request-id']), /^req_/);
      }
      for (const [url, body, field] of lone) {
        const r = await post(url, body);
        assert.equal(r.statusCode, 400, `${url} ${body}: ${r.body}`);
        assert.deepEqual(errorOf(r).details, { fields: [{ field, message: 'is not well-formed Unicode (a lone surrogate)' }] }, body);
      }
      assert.equal(await keyCount(), keys, 'no key was made');
      const batches = await h.app.inject({ url: '/social/v1/bulk-export/watchlist', headers: { 'x-api-key': a.apiKey } });
      assert.equal((JSON.parse(batches.body) as { items: unknown[] }).items.length, 0, 'nothing watched');
    });

    test('a NUL deep in a body nested 10,000 levels is named as such (the walk overflowed the stack and said __proto__)', async () => {
      const depth = 10_000;
      const r = await post('/api/v1/api-keys', `{"name":"x","z":${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)}}`);
      assert.equal(r.statusCode, 400, r.body);
      const e = errorOf(r);
      assert.equal(e.message, `body.z${'.0'.repeat(depth)} holds a NUL character.`);
    });

    test('a backslash written before u0000 is text, not a NUL; other bodies parse as before', async () => {
      const r = await post('/api/v1/api-keys', '{"name":"a\\\\u0000"}');
      assert.equal(r.statusCode, 201, r.body);
      assert.equal((JSON.parse(r.body) as { data: { name: string } }).data.name, 'a\\u0000');
      // A pair is one character, kept as sent.
      const emoji = await post('/api/v1/api-keys', '{"name":"\\ud83d\\ude00"}');
      assert.equal(emoji.statusCode, 201, emoji.body);
      const list = JSON.parse((await h.app.inject({ url: '/api/v1/api-keys', headers: { 'x-api-key': a.apiKey } })).body) as { items: Array<{ name: string }> };
      assert.ok(list.items.some((k) => k.name === '😀'), 'stored as sent');
      assert.equal(errorOf(await post('/api/v1/api-keys', '{"name":')).code, 'invalid_request');
      const poisoned = await post('/api/v1/api-keys', '{"name":"x","__proto__":{"admin":true}}');
      assert.equal(poisoned.statusCode, 400, 'prototype poisoning is still refused');
      // Valid JSON refused, said so (it was "not valid JSON").
      assert.equal(errorOf(poisoned).message, 'The body holds a __proto__ or constructor.prototype key, which is refused.');
    });

    test('bytes that are not UTF-8 are a 400, not stored with U+FFFD in their place', async () => {
      const keys = await keyCount();
      for (const bytes of [Buffer.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0x61, 0xff, 0xfe, 0x62, 0x22, 0x7d]), Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])]) {
        const r = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: { 'x-api-key': a.apiKey, 'content-type': 'application/json' }, payload: bytes });
        assert.equal(r.statusCode, 400, r.body);
        assert.equal(errorOf(r).message, 'The body is not valid UTF-8.');
        assert.equal(r.headers['x-credits-charged'], '0');
      }
      assert.equal(await keyCount(), keys, 'no key was made');
      // U+FFFD sent as such is a character like any other.
      const sent = await post('/api/v1/api-keys', '{"name":"a\ufffdb �"}');
      assert.equal(sent.statusCode, 201, sent.body);
    });
  });
}

// The parser alone, on a route with no schema (every route of ours has one, which refuses unknown
// fields anyway): the poisoning checks are Fastify's defaults, kept.
test('the parser refuses prototype and constructor poisoning, as Fastify does by default', async () => {
  const app = Fastify();
  registerJsonBodyParser(app);
  app.post('/x', async (request) => ({ keys: Object.keys(request.body as object) }));
  try {
    for (const body of ['{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}']) {
      const r = await app.inject({ method: 'POST', url: '/x', headers: { 'content-type': 'application/json' }, payload: body });
      assert.equal(r.statusCode, 400, body);
    }
    const ok = await app.inject({ method: 'POST', url: '/x', headers: { 'content-type': 'application/json' }, payload: '{"constructor":"a string"}' });
    assert.deepEqual(JSON.parse(ok.body), { keys: ['constructor'] });
  } finally {
    await app.close();
  }
});
