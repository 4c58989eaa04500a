// Timeline filters on SOURCE=x: what reaches X (start_time, end_time, since_id, until_id) page after
// page, what comes back (only tweets inside the window, even when X answers more), and bad filters
// that never reach X and are never charged. Then against Prism, that the requests match X's document.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import type { Tweet } from '../../src/domain/models.js';
import { XSource } from '../../src/sources/x/x-source.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { startFixtureServer, TOKEN, type FixtureServer } from './helpers.js';
import { startPrism, type RunningPrism } from './prism.js';

interface PageBody {
  items: Tweet[];
  hasNextPage: boolean;
  nextCursor: string | null;
}

const USER = '2244994945';
const PATH = `/2/users/${USER}/tweets`;

for (const backend of backends()) {
  describe(`timeline filters on SOURCE=x (${backend})`, () => {
    let h: Harness;
    let x: FixtureServer;
    let a: TestAccount;
    const get = (url: string) => h.app.inject({ url, headers: { 'x-api-key': a.apiKey } });
    const sent = () => x.seen.filter((r) => r.path === PATH);

    before(async () => {
      x = await startFixtureServer();
      h = await startHarness(backend, { SOURCE: 'x', X_BEARER_TOKEN: TOKEN, X_BASE_URL: x.baseUrl, SOURCE_TIMEOUT_MS: '2000' });
      a = await h.account({ credits: 10_000 });
      // Five tweets from 2024-11-28 to 2024-12-02, whatever is asked: the window is checked on our side too.
      x.on(PATH, { file: 'timeline-tweet-era.json' });
    });
    after(async () => {
      await h.close();
      await x.close();
    });

    test('the four filters reach X on every page; only tweets inside them come back; the walk ends at the lower bound', async () => {
      const filters = 'startTime=2024-11-29T00:00:00Z&endTime=2024-12-02T00:00:00.500Z&sinceId=1860000000000000000&untilId=1880000000000000000';
      const p1 = await get(`/social/v1/users/${USER}/tweets?limit=2&${filters}`);
      assert.equal(p1.statusCode, 200, p1.body);
      const b1 = json<PageBody>(p1);
      assert.deepEqual(b1.items.map((t) => t.id), ['1870000000000000007', '1870000000000000005'], 'the Dec 2 tweet is after endTime');
      const q1 = sent().at(-1)!.query;
      assert.equal(q1.get('start_time'), '2024-11-29T00:00:00Z');
      assert.equal(q1.get('end_time'), '2024-12-02T00:00:01Z', "X's seconds, rounded up: endTime stays exclusive");
      assert.equal(q1.get('since_id'), '1860000000000000000');
      assert.equal(q1.get('until_id'), '1880000000000000000');
      assert.equal(q1.get('max_results'), '5');
      assert.ok(b1.nextCursor);

      // The cursor carries the filters: page two can leave them out.
      const p2 = await get(`/social/v1/users/${USER}/tweets?limit=2&cursor=${encodeURIComponent(b1.nextCursor!)}`);
      assert.equal(p2.statusCode, 200, p2.body);
      const b2 = json<PageBody>(p2);
      assert.deepEqual(b2.items.map((t) => t.id), ['1870000000000000004'], 'nothing repeated; the Nov 28 tweet is before startTime');
      assert.equal(b2.hasNextPage, false);
      const q2 = sent().at(-1)!.query;
      assert.equal(q2.get('until_id'), '1870000000000000005', 'below the last tweet returned (lower than the caller untilId)');
      assert.equal(q2.get('start_time'), '2024-11-29T00:00:00Z');
      assert.equal(q2.get('end_time'), '2024-12-02T00:00:01Z');
      assert.equal(q2.get('since_id'), '1860000000000000000');
      assert.equal(q2.get('pagination_token'), null);
    });

    test('untilId and sinceId alone bound what comes back', async () => {
      const r = json<PageBody>(await get(`/social/v1/users/${USER}/tweets?limit=10&sinceId=1870000000000000003&untilId=1870000000000000009`));
      assert.deepEqual(r.items.map((t) => t.id), ['1870000000000000007', '1870000000000000005', '1870000000000000004']);
      const q = sent().at(-1)!.query;
      assert.equal(q.get('since_id'), '1870000000000000003');
      assert.equal(q.get('until_id'), '1870000000000000009');
      assert.equal(q.get('start_time'), null);
    });

    test("a startTime before X's earliest accepted day is applied on our side, not sent", async () => {
      const r = json<PageBody>(await get(`/social/v1/users/${USER}/tweets?limit=10&startTime=2009-01-01T00:00:00Z&endTime=2024-12-01T10:00:00Z`));
      assert.deepEqual(r.items.map((t) => t.id), ['1870000000000000005', '1870000000000000004', '1870000000000000003']);
      const q = sent().at(-1)!.query;
      assert.equal(q.get('start_time'), null);
      assert.equal(q.get('end_time'), '2024-12-01T10:00:00Z');
    });

    test('bad filters are 400 before X is asked, and free', async () => {
      const calls = sent().length;
      const before = (await getBalance(h.deps.store.db, a.accountId))!.balance;
      for (const q of ['startTime=2024-11-29T00:00:00', 'endTime=soon', 'sinceId=x1', 'sinceId=5&untilId=5', 'startTime=2024-11-29T00:00:00Z&endTime=2024-11-28T00:00:00Z']) {
        const r = await get(`/social/v1/users/${USER}/tweets?${q}`);
        assert.equal(r.statusCode, 400, q);
        assert.equal(errorOf(r).code, 'invalid_request');
        assert.equal(r.headers['x-credits-charged'], '0');
      }
      assert.equal(sent().length, calls, 'X was not called');
      assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, before);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), before);
    });
  });
}

describe("timeline filters against Prism (X's OpenAPI document)", () => {
  let prism: RunningPrism;
  before(
    async () => {
      prism = await startPrism(60_000);
    },
    { timeout: 90_000 },
  );
  after(async () => {
    await prism?.stop();
  });

  test('start_time, end_time, since_id and until_id as the document defines them, on the first page and below a cursor', async () => {
    const seen: Array<{ query: URLSearchParams; status: number; violations: string | null }> = [];
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const url = new URL(input instanceof Request ? input.url : String(input));
      seen.push({ query: url.searchParams, status: response.status, violations: response.headers.get('sl-violations') });
      return response;
    };
    const x = new XSource({ bearerToken: TOKEN, baseUrl: prism.baseUrl, fetch: recording });
    const filters = {
      startTime: new Date('2024-11-01T00:00:00.250Z'),
      endTime: new Date('2024-11-02T00:00:00Z'),
      sinceId: '1850000000000000000',
      untilId: '1860000000000000000',
    };
    // Prism's example tweets have ids that are not X's: the answer may not map; the request is what is checked.
    await x.getUserTweets(USER, { limit: 10, ...filters }).catch(() => undefined);
    await x.getUserTweets(USER, { limit: 10, ...filters, after: 'until_id:1855000000000000000' }).catch(() => undefined);
    await x.getUserTweets(USER, { limit: 10, startTime: new Date('2009-06-01T00:00:00Z') }).catch(() => undefined);
    assert.equal(seen.length, 3);
    for (const s of seen) {
      assert.equal(s.violations, null, `Prism found the request invalid: ${s.violations}`);
      assert.equal(s.status, 200);
    }
    const [first, second, early] = seen.map((s) => s.query);
    assert.equal(first!.get('start_time'), '2024-11-01T00:00:01Z');
    assert.equal(first!.get('end_time'), '2024-11-02T00:00:00Z');
    assert.equal(first!.get('since_id'), '1850000000000000000');
    assert.equal(first!.get('until_id'), '1860000000000000000');
    assert.equal(second!.get('until_id'), '1855000000000000000', 'the lower of the cursor and untilId');
    assert.equal(second!.get('since_id'), '1850000000000000000');
    assert.equal(early!.get('start_time'), null, 'the document accepts nothing before 2010-11-06');
  });
});
