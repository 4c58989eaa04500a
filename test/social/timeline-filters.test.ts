// startTime, endTime, sinceId and untilId on GET /social/v1/users/{id}/tweets over the demo network:
// exactly the tweets the unfiltered timeline has in the window, in pages of the window's tweets only;
// bad values are 400 and free; a cursor keeps its filters and refuses others.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import type { Tweet } from '../../src/domain/models.js';
import { DemoSource } from '../../src/sources/demo/demo-source.js';
import { demoSample } from '../../src/sources/demo/sample.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { useSource } from '../helpers/social.js';

interface PageBody {
  items: Tweet[];
  hasNextPage: boolean;
  nextCursor: string | null;
  cached: boolean;
}

const NOW = Date.parse('2026-11-20T12:00:00.000Z');
const DAY_START = '2026-11-18T00:00:00.000Z';
const DAY_END = '2026-11-19T00:00:00.000Z';

for (const backend of backends()) {
  describe(`timeline filters on the demo network (${backend})`, () => {
    let h: Harness;
    let a: TestAccount;
    const demo = new DemoSource({ seed: 7, userCount: 200_000, now: () => new Date(NOW) });
    const sample = demoSample(demo, new Date(NOW));
    const uid = sample.userIds[0]!;
    const base = `/social/v1/users/${uid}/tweets`;
    const get = (url: string) => h.app.inject({ url, headers: { 'x-api-key': a.apiKey } });
    const balance = async () => (await getBalance(h.deps.store.db, a.accountId))!.balance;
    /** Every page of a list; `stop` ends the walk early (on the items so far). */
    const walk = async (query: string, stop?: (items: Tweet[]) => boolean) => {
      const items: Tweet[] = [];
      let pages = 0;
      let cursor: string | null = null;
      do {
        const sep = query ? '&' : '';
        const r = await get(`${base}?${query}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.equal(r.statusCode, 200, r.body);
        assert.equal(r.headers['x-credits-charged'], '100');
        const b = json<PageBody>(r);
        items.push(...b.items);
        pages++;
        assert.equal(b.nextCursor === null, !b.hasNextPage);
        cursor = b.nextCursor;
        assert.ok(pages < 200, 'the walk ends');
      } while (cursor && !stop?.(items));
      return { items, pages };
    };
    let unfiltered: Tweet[] = [];

    before(async () => {
      h = await startHarness(backend, {}, useSource(demo, () => NOW));
      a = await h.account({ credits: 10_000_000 });
      // The whole timeline back to before the day, unfiltered, 100 a page.
      unfiltered = (await walk('limit=100', (items) => items.at(-1)!.createdAt < DAY_START)).items;
    });
    after(() => h.close());

    test("one day: exactly that day's tweets of the unfiltered timeline, in pages of that day's tweets only, each charged", async () => {
      const expected = unfiltered.filter((t) => t.createdAt >= DAY_START && t.createdAt < DAY_END);
      assert.ok(expected.length > 20, `an active account posts every hour: ${expected.length} that day`);
      const newer = unfiltered.filter((t) => t.createdAt >= DAY_END).length;
      assert.ok(newer > 20, 'the day is far enough back that an unfiltered walk would page through newer tweets first');

      const before = await balance();
      const { items, pages } = await walk(`limit=20&startTime=${DAY_START}&endTime=${DAY_END}`);
      assert.deepEqual(items.map((t) => t.id), expected.map((t) => t.id));
      assert.deepEqual(items, expected);
      assert.equal(pages, Math.ceil(expected.length / 20), 'as many pages as the day needs, no more');
      assert.ok(pages < Math.ceil((newer + expected.length) / 20), 'fewer than an unfiltered walk to the end of that day');
      assert.equal(await balance(), before - 100 * pages);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), await balance());

      // The same instants written with an offset are the same window.
      const offset = await walk('limit=100&startTime=2026-11-18T01:00:00%2B01:00&endTime=2026-11-18T19:00:00-05:00');
      assert.deepEqual(offset.items.map((t) => t.id), expected.map((t) => t.id));
    });

    test('startTime is inclusive and endTime exclusive, to the millisecond', async () => {
      const [upper, lower] = [unfiltered[20]!, unfiltered[30]!];
      assert.ok(upper.createdAt > lower.createdAt);
      const { items } = await walk(`limit=100&startTime=${lower.createdAt}&endTime=${upper.createdAt}`);
      const expected = unfiltered.filter((t) => t.createdAt >= lower.createdAt && t.createdAt < upper.createdAt);
      assert.deepEqual(items.map((t) => t.id), expected.map((t) => t.id));
      assert.ok(items.some((t) => t.id === lower.id), 'a tweet at startTime is in');
      assert.ok(!items.some((t) => t.id === upper.id), 'a tweet at endTime is out');
      const justAfter = new Date(Date.parse(lower.createdAt) + 1).toISOString();
      const later = await walk(`limit=100&startTime=${justAfter}&endTime=${upper.createdAt}`);
      assert.ok(!later.items.some((t) => t.id === lower.id), 'one millisecond later it is out');
      // The same instants at +01:00, the '+' unencoded (it arrives as a space): the same tweets.
      const plusOne = (iso: string) => `${new Date(Date.parse(iso) + 3_600_000).toISOString().slice(0, -1)}+01:00`;
      const raw = await walk(`limit=100&startTime=${plusOne(lower.createdAt)}&endTime=${plusOne(upper.createdAt)}`);
      assert.deepEqual(raw.items.map((t) => t.id), expected.map((t) => t.id));
    });

    test('sinceId and untilId are exclusive, alone, together and with times', async () => {
      const [newer, older] = [unfiltered[10]!, unfiltered[60]!];
      const both = await walk(`limit=20&sinceId=${older.id}&untilId=${newer.id}`);
      assert.deepEqual(both.items.map((t) => t.id), unfiltered.slice(11, 60).map((t) => t.id));
      assert.equal(both.pages, 3);
      const until = await walk(`limit=25&untilId=${newer.id}`, (items) => items.length >= 50);
      assert.deepEqual(until.items.slice(0, 50).map((t) => t.id), unfiltered.slice(11, 61).map((t) => t.id));
      const since = await walk(`limit=30&sinceId=${older.id}`);
      assert.deepEqual(since.items.map((t) => t.id), unfiltered.slice(0, 60).map((t) => t.id));
      const mixed = await walk(`limit=7&untilId=${newer.id}&startTime=${older.createdAt}`);
      assert.deepEqual(mixed.items.map((t) => t.id), unfiltered.slice(11).filter((t) => t.createdAt >= older.createdAt).map((t) => t.id));
    });

    test('a cursor continues its filters: repeated or left out; other filters, or filters on an unfiltered cursor, are 400 invalid_cursor and free', async () => {
      const window = `startTime=${DAY_START}&endTime=${DAY_END}`;
      const first = json<PageBody>(await get(`${base}?limit=10&${window}`));
      const cursor = encodeURIComponent(first.nextCursor!);
      const repeated = json<PageBody>(await get(`${base}?limit=10&${window}&cursor=${cursor}`));
      const omitted = json<PageBody>(await get(`${base}?limit=10&cursor=${cursor}`));
      assert.deepEqual(omitted.items.map((t) => t.id), repeated.items.map((t) => t.id));
      assert.ok(omitted.items.every((t) => t.createdAt >= DAY_START && t.createdAt < DAY_END));
      // Spelled differently, the same instants: the same filters.
      const respelled = await get(`${base}?limit=10&startTime=2026-11-18T00:00:00Z&endTime=2026-11-19T00:00Z&cursor=${cursor}`);
      assert.equal(respelled.statusCode, 200, respelled.body);

      const plain = json<PageBody>(await get(`${base}?limit=10`)).nextCursor!;
      const before = await balance();
      for (const url of [
        `${base}?limit=10&startTime=${DAY_START}&endTime=2026-11-18T12:00:00Z&cursor=${cursor}`,
        `${base}?limit=10&startTime=${DAY_START}&cursor=${cursor}`,
        `${base}?limit=10&${window}&sinceId=1&cursor=${cursor}`,
        `${base}?limit=10&${window}&cursor=${encodeURIComponent(plain)}`,
      ]) {
        const r = await get(url);
        assert.equal(r.statusCode, 400, url);
        assert.equal(errorOf(r).code, 'invalid_cursor');
        assert.equal(r.headers['x-credits-charged'], '0');
      }
      assert.equal(await balance(), before);
    });

    test('a tampered cursor is 400 invalid_cursor: other filters or another position under the same signature', async () => {
      const r = json<PageBody>(await get(`${base}?limit=10&startTime=${DAY_START}&endTime=${DAY_END}`));
      const [body, sig] = r.nextCursor!.split('.') as [string, string];
      const pos = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { p: string; f?: Record<string, string> };
      assert.deepEqual(pos.f, { startTime: DAY_START, endTime: DAY_END }, 'the cursor carries its filters');
      const forge = (v: unknown) => `${Buffer.from(JSON.stringify(v)).toString('base64url')}.${sig}`;
      const before = await balance();
      for (const forged of [
        forge({ ...pos, f: { startTime: '2020-01-01T00:00:00.000Z', endTime: DAY_END } }),
        forge({ p: pos.p }),
        forge({ ...pos, p: unfiltered[0]!.id }),
        `${body}.${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`,
      ]) {
        for (const q of [`startTime=${DAY_START}&endTime=${DAY_END}&`, '']) {
          const res = await get(`${base}?${q}limit=10&cursor=${encodeURIComponent(forged)}`);
          assert.equal(res.statusCode, 400, forged);
          assert.equal(errorOf(res).code, 'invalid_cursor');
        }
      }
      assert.equal(await balance(), before);
    });

    test('bad values are 400 invalid_request naming the field, never charged', async () => {
      const cases: Array<[string, string]> = [
        ['startTime=2026-11-18', 'startTime'],
        ['startTime=2026-11-18T00:00:00', 'startTime'],
        ['startTime=yesterday', 'startTime'],
        ['startTime=1763424000', 'startTime'],
        ['endTime=2026-02-30T00:00:00Z', 'endTime'],
        ['endTime=2026-11-18T24:00:00Z', 'endTime'],
        ['endTime=2026-11-18T00:00:00%2B25:00', 'endTime'],
        ['endTime=2026-11-18T00:00:00+25:00', 'endTime'],
        ['endTime=2026-11-18 00:00:00Z', 'endTime'],
        ['startTime=', 'startTime'],
        [`startTime=${DAY_END}&endTime=${DAY_START}`, 'endTime'],
        [`startTime=${DAY_START}&endTime=${DAY_START}`, 'endTime'],
        [`startTime=2026-11-18T01:00:00%2B01:00&endTime=${DAY_START}`, 'endTime'],
        ['sinceId=abc', 'sinceId'],
        ['sinceId=-5', 'sinceId'],
        ['untilId=1.5', 'untilId'],
        ['untilId=12345678901234567890', 'untilId'],
        ['sinceId=', 'sinceId'],
        ['sinceId=200&untilId=100', 'untilId'],
        ['sinceId=100&untilId=100', 'untilId'],
        ['sinceId=0100&untilId=100', 'untilId'],
        ['start_time=2026-11-18T00:00:00Z', 'start_time'],
      ];
      const before = await balance();
      for (const [q, field] of cases) {
        const r = await get(`${base}?${q}`);
        assert.equal(r.statusCode, 400, `${q}: ${r.body}`);
        const e = errorOf(r);
        assert.equal(e.code, 'invalid_request', q);
        const fields = (e.details?.fields ?? []) as Array<{ field: string }>;
        assert.equal(fields[0]?.field, `querystring.${field}`, `${q}: ${r.body}`);
        assert.ok(e.message.includes(field), e.message);
        assert.equal(r.headers['x-credits-charged'], '0');
      }
      assert.equal(await balance(), before);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), before);
    });

    test('the list cache keeps filtered and unfiltered pages apart', async () => {
      const window = `limit=5&startTime=${DAY_START}&endTime=${DAY_END}`;
      const f1 = json<PageBody>(await get(`${base}?${window}`));
      const u1 = json<PageBody>(await get(`${base}?limit=5`));
      const f2 = json<PageBody>(await get(`${base}?${window}`));
      assert.deepEqual(u1.items.map((t) => t.id), unfiltered.slice(0, 5).map((t) => t.id));
      assert.deepEqual(f2.items.map((t) => t.id), f1.items.map((t) => t.id));
      assert.ok(f1.items.every((t) => t.createdAt < DAY_END));
      assert.equal(f2.cached, true);
      const other = json<PageBody>(await get(`${base}?limit=5&startTime=${DAY_START}&endTime=2026-11-18T06:00:00Z`));
      assert.ok(other.items.every((t) => t.createdAt < '2026-11-18T06:00:00.000Z'), 'another window is another list');
    });
  });
}
