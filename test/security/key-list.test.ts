// The key list is paginated (limit + signed cursor), like every other list, and documented so.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createKey } from '../../src/accounts/accounts-repo.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, startHarness, type Harness } from '../helpers/harness.js';

type Page = { items: Array<{ id: string; createdAt: string; key?: unknown }>; hasNextPage: boolean; nextCursor: string | null };

for (const dialect of backends()) {
  describe(`GET /api/v1/api-keys pages (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect);
    });
    after(() => h.close());

    test('25 keys in pages of 10: every key once, newest first, no secret', async () => {
      const a = await h.account();
      const made = [a.keyId];
      for (let i = 0; i < 24; i++) made.push((await createKey(h.deps.store.db, a.accountId, `k${i}`)).id);
      const seen: Page['items'] = [];
      let cursor: string | null = null;
      const sizes: number[] = [];
      do {
        const q: string = cursor ? `?limit=10&cursor=${encodeURIComponent(cursor)}` : '?limit=10';
        const r = await h.app.inject({ url: `/api/v1/api-keys${q}`, headers: { 'x-api-key': a.apiKey } });
        assert.equal(r.statusCode, 200, r.body);
        const page = json<Page>(r);
        sizes.push(page.items.length);
        seen.push(...page.items);
        cursor = page.nextCursor;
        assert.equal(page.hasNextPage, cursor !== null);
      } while (cursor);
      assert.deepEqual(sizes, [10, 10, 5]);
      assert.deepEqual(new Set(seen.map((k) => k.id)), new Set(made));
      assert.equal(seen.length, 25);
      for (let i = 1; i < seen.length; i++) assert.ok(seen[i - 1]!.createdAt >= seen[i]!.createdAt);
      assert.ok(seen.every((k) => k.key === undefined));
    });

    test("a cursor of another account's list is invalid_cursor; limit over 100 is 400", async () => {
      const a = await h.account();
      const b = await h.account();
      await createKey(h.deps.store.db, a.accountId, 'x');
      const first = json<Page>(await h.app.inject({ url: '/api/v1/api-keys?limit=1', headers: { 'x-api-key': a.apiKey } }));
      assert.ok(first.nextCursor);
      const r = await h.app.inject({ url: `/api/v1/api-keys?cursor=${encodeURIComponent(first.nextCursor)}`, headers: { 'x-api-key': b.apiKey } });
      assert.equal(r.statusCode, 400);
      assert.equal(errorOf(r).code, 'invalid_cursor');
      const big = await h.app.inject({ url: '/api/v1/api-keys?limit=101', headers: { 'x-api-key': a.apiKey } });
      assert.equal(big.statusCode, 400);
    });

    test('the OpenAPI document states limit, cursor and the paginated answer', async () => {
      const doc = json<{ paths: Record<string, { get: { parameters: Array<{ name: string }>; responses: Record<string, { content: Record<string, { schema: { properties: Record<string, unknown> } }> }> } }> }>(
        await h.app.inject({ url: '/openapi.json' }),
      );
      const op = doc.paths['/api/v1/api-keys']!.get;
      assert.deepEqual(op.parameters.map((p) => p.name).sort(), ['cursor', 'limit', 'status']);
      const props = op.responses['200']!.content['application/json']!.schema.properties;
      assert.ok(props.items && props.nextCursor && props.hasNextPage);
    });
  });
}
