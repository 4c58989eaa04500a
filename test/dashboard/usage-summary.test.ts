// GET /api/v1/usage/summary on each store: its sums equal the ledger's, summed here by hand, for every
// granularity, endpoint and offset, with empty windows and bad input included.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DemoSource } from '../../src/sources/demo/demo-source.js';
import { demoSample } from '../../src/sources/demo/sample.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, startHarness, type Harness, type TestAccount } from '../helpers/harness.js';

interface Count {
  endpoint: string;
  calls: number;
  credits: number;
}
interface Summary {
  from: string;
  to: string;
  granularity: 'hour' | 'day';
  calls: number;
  credits: number;
  endpoints: Count[];
  buckets: Array<{ start: string; end: string; calls: number; credits: number; endpoints: Count[] }>;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
// A fixed stretch of time, so every run tests the same boundaries.
const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const ENDPOINTS = ['getTweet', 'getUserByUsername', 'getUserTweets', 'getCommunity'];

/** A small deterministic generator: the same ledger on every run and store. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

for (const backend of backends()) {
  describe(`usage summary (${backend})`, () => {
    let h: Harness;
    let a: TestAccount;
    let other: TestAccount;
    // The ledger rows of account a, as written.
    const rows: Array<{ at: number; endpoint: string; amount: number }> = [];

    before(async () => {
      h = await startHarness(backend);
      a = await h.account({ credits: 1_000_000 });
      other = await h.account({ credits: 1_000_000 });
      const rnd = prng(42);
      const values: Array<Record<string, unknown>> = [];
      for (let i = 0; i < 600; i++) {
        // 40 days from T0, with some entries exactly on hour and day boundaries and at their last millisecond.
        const kind = i % 10;
        const base = T0 + Math.floor(rnd() * 40) * DAY + Math.floor(rnd() * 24) * HOUR;
        const at = kind === 0 ? base : kind === 1 ? base - 1 : base + Math.floor(rnd() * HOUR);
        const endpoint = ENDPOINTS[Math.floor(rnd() * ENDPOINTS.length)]!;
        const amount = -(1 + Math.floor(rnd() * 300));
        rows.push({ at, endpoint, amount });
        values.push(entry(a.accountId, at, endpoint, amount));
        // The other account's charges at the same instants must never show.
        values.push(entry(other.accountId, at, endpoint, amount));
      }
      // Grants are not calls.
      values.push({ ...entry(a.accountId, T0 + 5 * HOUR, 'x', 1000), kind: 'grant', endpoint: null, amount: 1000 });
      for (let i = 0; i < values.length; i += 100) await h.deps.store.db.insertInto('ledger_entries').values(values.slice(i, i + 100) as never).execute();
    });
    after(() => h.close());

    function entry(accountId: string, at: number, endpoint: string, amount: number) {
      return { account_id: accountId, kind: 'charge', amount, balance_after: 0, request_id: null, key_id: null, endpoint, note: null, created_at: new Date(at).toISOString() };
    }

    async function summary(query: string, key = a.apiKey) {
      return h.app.inject({ url: `/api/v1/usage/summary?${query}`, headers: { 'x-api-key': key } });
    }

    /** What the summary must say, summed from the rows in this process. */
    function expected(fromMs: number, toMs: number, bucketMs: number) {
      const n = Math.ceil((toMs - fromMs) / bucketMs);
      const buckets = Array.from({ length: n }, () => new Map<string, Count>());
      for (const r of rows) {
        if (r.at < fromMs || r.at >= toMs) continue;
        const m = buckets[Math.floor((r.at - fromMs) / bucketMs)]!;
        const c = m.get(r.endpoint) ?? { endpoint: r.endpoint, calls: 0, credits: 0 };
        c.calls += 1;
        c.credits += -r.amount;
        m.set(r.endpoint, c);
      }
      return buckets.map((m) => [...m.values()].sort((x, y) => x.endpoint.localeCompare(y.endpoint)));
    }

    const cases: Array<{ name: string; from: string; to: string; granularity: 'hour' | 'day' }> = [
      { name: 'days in UTC', from: '2026-03-01T00:00:00Z', to: '2026-04-10T00:00:00Z', granularity: 'day' },
      { name: 'days from a local midnight at +05:30', from: '2026-03-03T00:00:00+05:30', to: '2026-03-20T00:00:00+05:30', granularity: 'day' },
      { name: 'days at -08:00, the window ending mid-day', from: '2026-03-05T00:00:00-08:00', to: '2026-03-15T13:20:00-08:00', granularity: 'day' },
      { name: 'hours in UTC', from: '2026-03-02T00:00:00Z', to: '2026-03-09T00:00:00Z', granularity: 'hour' },
      { name: 'hours at +05:45 (a quarter-hour offset)', from: '2026-03-10T07:00:00+05:45', to: '2026-03-12T07:00:00+05:45', granularity: 'hour' },
      { name: 'hours from an unaligned instant with milliseconds', from: '2026-03-04T10:17:31.250Z', to: '2026-03-06T10:00:00Z', granularity: 'hour' },
      { name: 'the whole 31 days allowed by hour', from: '2026-03-01T00:00:00Z', to: '2026-04-01T00:00:00Z', granularity: 'hour' },
    ];
    for (const c of cases) {
      test(`sums equal the ledger's: ${c.name}`, async () => {
        const res = await summary(`from=${encodeURIComponent(c.from)}&to=${encodeURIComponent(c.to)}&granularity=${c.granularity}`);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers['x-credits-charged'], '0');
        const s = json<{ data: Summary }>(res).data;
        const fromMs = Date.parse(c.from);
        const toMs = Date.parse(c.to);
        const want = expected(fromMs, toMs, c.granularity === 'hour' ? HOUR : DAY);
        assert.equal(s.buckets.length, want.length);
        assert.ok(want.some((b) => b.length > 0), 'the case covers some entries');
        for (let i = 0; i < want.length; i++) {
          const b = s.buckets[i]!;
          assert.deepEqual([...b.endpoints].sort((x, y) => x.endpoint.localeCompare(y.endpoint)), want[i], `bucket ${i} (${b.start})`);
          assert.equal(b.calls, want[i]!.reduce((n, x) => n + x.calls, 0));
          assert.equal(b.credits, want[i]!.reduce((n, x) => n + x.credits, 0));
          // Buckets tile the window, labelled in the caller's offset.
          assert.equal(Date.parse(b.start), fromMs + i * (c.granularity === 'hour' ? HOUR : DAY));
          assert.equal(Date.parse(b.end), Math.min(toMs, Date.parse(b.start) + (c.granularity === 'hour' ? HOUR : DAY)));
          const offset = /(Z|[+-]\d{2}:\d{2})$/.exec(c.from)![1];
          assert.ok(b.start.endsWith(offset!), `${b.start} is written in ${offset}`);
        }
        // Totals per endpoint and overall equal the ledger's own sums in the window.
        for (const ep of ENDPOINTS) {
          const inWindow = rows.filter((r) => r.endpoint === ep && r.at >= fromMs && r.at < toMs);
          const got = s.endpoints.find((e) => e.endpoint === ep);
          assert.deepEqual(got ?? { endpoint: ep, calls: 0, credits: 0 }, { endpoint: ep, calls: inWindow.length, credits: -inWindow.reduce((n, r) => n + r.amount, 0) });
        }
        const all = rows.filter((r) => r.at >= fromMs && r.at < toMs);
        assert.equal(s.calls, all.length);
        assert.equal(s.credits, -all.reduce((n, r) => n + r.amount, 0));
        assert.equal(Date.parse(s.from), fromMs);
        assert.equal(Date.parse(s.to), toMs);
      });
    }

    test('the same window written in two offsets gives the same sums, labelled in each', async () => {
      const z = json<{ data: Summary }>(await summary('from=2026-03-07T18:30:00Z&to=2026-03-14T18:30:00Z&granularity=day')).data;
      const ist = json<{ data: Summary }>(await summary(`from=${encodeURIComponent('2026-03-08T00:00:00+05:30')}&to=${encodeURIComponent('2026-03-15T00:00:00+05:30')}&granularity=day`)).data;
      assert.deepEqual(ist.buckets.map((b) => b.credits), z.buckets.map((b) => b.credits));
      assert.equal(ist.buckets[0]!.start, '2026-03-08T00:00:00.000+05:30');
      assert.equal(z.buckets[0]!.start, '2026-03-07T18:30:00.000Z');
      // The offset's '+' written unencoded arrives as a space: read as the '+' it was.
      const raw = json<{ data: Summary }>(await summary('from=2026-03-08T00:00:00+05:30&to=2026-03-15T00:00:00+05:30&granularity=day')).data;
      assert.deepEqual(raw, ist);
      const west = await summary('from=2026-03-08T00:00:00-05:00&to=2026-03-15T00:00:00-05:00&granularity=day');
      assert.equal(json<{ data: Summary }>(west).data.buckets[0]!.start, '2026-03-08T00:00:00.000-05:00');
    });

    test('an empty window answers every bucket with zeros', async () => {
      const s = json<{ data: Summary }>(await summary('from=2027-01-01T00:00:00Z&to=2027-01-02T00:00:00Z&granularity=hour')).data;
      assert.equal(s.buckets.length, 24);
      assert.ok(s.buckets.every((b) => b.calls === 0 && b.credits === 0 && b.endpoints.length === 0));
      assert.deepEqual(s.endpoints, []);
      assert.equal(s.calls, 0);
      // An account with no charges at all.
      const fresh = await h.account({ credits: 10 });
      const f = json<{ data: Summary }>(await summary('from=2026-03-01T00:00:00Z&to=2026-04-10T00:00:00Z', fresh.apiKey)).data;
      assert.equal(f.granularity, 'day');
      assert.equal(f.buckets.length, 40);
      assert.equal(f.credits, 0);
    });

    test('real charges made through the gateway show up under their endpoint', async () => {
      const c = await h.account({ credits: 1_000 });
      const before = Date.now();
      // A twin of the demo network behind the gateway (deterministic from its seed) names ids that exist.
      const sample = demoSample(new DemoSource({ seed: h.config.source.demo.seed, userCount: h.config.source.demo.userCount }), new Date());
      const urls = [`/social/v1/users/by/username/${sample.usernames[0]}`, `/social/v1/tweets/${sample.tweetIds[0]}`, `/social/v1/tweets/${sample.tweetIds[1]}`, '/social/v1/users/by/username/x'];
      for (const url of urls) {
        const r = await h.app.inject({ url, headers: { 'x-api-key': c.apiKey } });
        assert.ok(r.statusCode === 200 || r.statusCode === 404, r.body);
      }
      const paid = await h.deps.store.db.selectFrom('ledger_entries').select(['amount', 'endpoint']).where('account_id', '=', c.accountId).where('kind', '=', 'charge').execute();
      const from = new Date(Math.floor(before / HOUR) * HOUR).toISOString();
      const to = new Date(Math.floor(before / HOUR) * HOUR + 2 * HOUR).toISOString();
      const s = json<{ data: Summary }>(await summary(`from=${from}&to=${to}&granularity=hour`, c.apiKey)).data;
      assert.equal(s.calls, paid.length);
      assert.equal(s.credits, -paid.reduce((n, p) => n + Number(p.amount), 0));
      assert.equal(paid.length, 3);
      assert.deepEqual(s.endpoints.map((e) => [e.endpoint, e.calls, e.credits]), [['getTweet', 2, 200], ['getUserByUsername', 1, 100]]);
    });

    test('bad input is a 400 naming the field, never charged', async () => {
      const bad: Array<[string, string]> = [
        ['to=2026-03-02T00:00:00Z', 'from'],
        ['from=2026-03-01T00:00:00Z', 'to'],
        ['from=2026-03-01T00:00:00&to=2026-03-02T00:00:00Z', 'from'],
        ['from=2026-03-01&to=2026-03-02T00:00:00Z', 'from'],
        ['from=2026-03-01T00:00:00Z&to=tomorrow', 'to'],
        ['from=2026-03-02T00:00:00Z&to=2026-03-02T00:00:00Z', 'to'],
        ['from=2026-03-03T00:00:00Z&to=2026-03-02T00:00:00Z', 'to'],
        ['from=2026-02-30T00:00:00Z&to=2026-03-02T00:00:00Z', 'from'],
        ['from=2026-03-01T00:00:00Z&to=2026-04-01T00:00:01Z&granularity=hour', 'to'],
        ['from=2026-01-01T00:00:00Z&to=2027-01-03T00:00:00Z&granularity=day', 'to'],
        ['from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z&granularity=week', 'granularity'],
        ['from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z&extra=1', 'extra'],
        // Labels in from's offset would fall in the year 10000, which a date-time cannot write.
        ['from=9999-12-31T23:00:00%2B14:00&to=9999-12-31T23:59:59Z', 'to'],
        ['from=9999-12-31T00:00:00Z&to=9999-12-31T23:59:59Z', 'to'],
      ];
      for (const [q, field] of bad) {
        const res = await summary(q);
        assert.equal(res.statusCode, 400, `${q}: ${res.body}`);
        const e = errorOf(res);
        assert.equal(e.code, 'invalid_request', q);
        assert.ok(JSON.stringify(e.details ?? {}).includes(field) || e.message.includes(field), `${q} names ${field}: ${res.body}`);
        assert.equal(res.headers['x-credits-charged'], '0');
      }
      // One day's bucket, ending at 9999-12-31T00:00+14:00: writable.
      const late = await summary('from=9999-12-30T00:00:00%2B14:00&to=9999-12-30T09:00:00Z');
      assert.equal(late.statusCode, 200, late.body);
      assert.match(late.body, /"to":"9999-12-3/);
      assert.doesNotMatch(late.body, /10000-/);
      // A value outside a fixed set names the set, once.
      const week = errorOf(await summary('from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z&granularity=week'));
      assert.equal(week.message, 'querystring.granularity must be one of: hour, day.');
      assert.deepEqual(week.details, { fields: [{ field: 'querystring.granularity', message: 'must be one of: hour, day' }] });
      const none = await h.app.inject({ url: '/api/v1/usage/summary?from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z' });
      assert.equal(errorOf(none).code, 'missing_api_key');
    });

    test("GET /api/v1/usage?endpoint= lists one endpoint's entries, and its cursors serve only that list", async () => {
      const want = rows.filter((r) => r.endpoint === 'getCommunity').length;
      const get = (url: string) => h.app.inject({ url, headers: { 'x-api-key': a.apiKey } });
      const seen: Array<{ endpoint: string }> = [];
      let cursor: string | null = null;
      let first: string | null = null;
      do {
        const res = await get(`/api/v1/usage?endpoint=getCommunity&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.equal(res.statusCode, 200, res.body);
        const page = json<{ items: Array<{ endpoint: string }>; nextCursor: string | null }>(res);
        seen.push(...page.items);
        const next: string | null = page.nextCursor;
        cursor = next;
        first ??= next;
      } while (cursor);
      assert.equal(seen.length, want);
      assert.ok(seen.every((e) => e.endpoint === 'getCommunity'));
      // A cursor of the filtered list is refused on the unfiltered one and on another filter.
      assert.ok(first, 'more than one page');
      for (const q of ['', '&endpoint=getTweet']) {
        const res = await get(`/api/v1/usage?cursor=${encodeURIComponent(first!)}${q}`);
        assert.equal(errorOf(res).code, 'invalid_cursor', q);
      }
      // A misspelt operation is refused, not answered with an empty list.
      const typo = await get('/api/v1/usage?endpoint=getTweets');
      assert.equal(typo.statusCode, 400);
      assert.equal(errorOf(typo).code, 'invalid_request');
      assert.match(JSON.stringify(errorOf(typo).details), /endpoint/);
      assert.equal(typo.headers['x-credits-charged'], '0');
    });

    test('GET /api/v1/account shows the plan, the rate limit and the balance', async () => {
      const res = await h.app.inject({ url: '/api/v1/account', headers: { 'x-api-key': a.apiKey } });
      assert.equal(res.statusCode, 200, res.body);
      const d = json<{ data: { id: string; planId: string; planName: string; rateLimitPerMinute: number; balance: number } }>(res).data;
      assert.equal(d.id, a.accountId);
      assert.equal(d.planId, h.config.defaultPlanId);
      assert.equal(d.planName, h.config.plans.find((p) => p.id === h.config.defaultPlanId)!.name);
      assert.equal(d.rateLimitPerMinute, 1_000_000);
      assert.equal(d.balance, 1_000_000);
      assert.equal(res.headers['x-credits-charged'], '0');
    });
  });
}
