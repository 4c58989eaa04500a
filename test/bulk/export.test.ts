// Exports end to end: the file (gunzipped, line by line against the store and the range), its size
// and SHA-256, the download link (tampering, expiry, tenancy), latest, and atomic writes.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { Value } from '@sinclair/typebox/value';
import { drainBulkWork } from '../../src/wiring/drain-jobs.js';
import { writeExport } from '../../src/exports/export-writer.js';
import { Tweet } from '../../src/domain/models.js';
import { LocalObjectStore } from '../../src/objects/local-object-store.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, type TestAccount } from '../helpers/harness.js';
import { BASE, bulkHarness, call, HOUR, T0, type BulkHarness } from './helpers.js';

interface ExportRec {
  id: string;
  status: string;
  startDate: string;
  endDate: string;
  format: string;
  tweetCount: number | null;
  sizeBytes: number | null;
  sha256: string | null;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  error: string | null;
}
interface Link {
  id: string;
  url: string;
  expiresAt: string;
  sizeBytes: number;
  sha256: string;
}

for (const backend of backends()) {
  describe(`exports (${backend})`, () => {
    let b: BulkHarness;
    let a: TestAccount;
    let other: TestAccount;
    const db = () => b.h.deps.store.db;
    const generate = async (acct: TestAccount, startDate: string, endDate: string): Promise<ExportRec> => {
      const res = await call(b.h, acct, 'POST', `${BASE}/exports/generate`, { startDate, endDate });
      assert.equal(res.statusCode, 202, res.body);
      return json<{ data: ExportRec }>(res).data;
    };
    const link = async (acct: TestAccount, id: string): Promise<Link> => {
      const res = await call(b.h, acct, 'GET', `${BASE}/exports/${id}/download`);
      assert.equal(res.statusCode, 200, res.body);
      return json<{ data: Link }>(res).data;
    };
    const fetchFile = (url: string) => {
      const u = new URL(url);
      return b.h.app.inject({ method: 'GET', url: u.pathname + u.search });
    };

    before(async () => {
      // Small pages, so that every export spans many keyset pages.
      b = await bulkHarness(backend, { EXPORT_PAGE_SIZE: '7', PUBLIC_BASE_URL: 'https://gw.example.test/' });
      a = await b.h.account();
      other = await b.h.account();
      const s = b.sample;
      // A watches 0, 1, 2; the other account watches 3, whose tweets must never be in A's exports.
      await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items: s.userIds.slice(0, 3).map((socialUserId) => ({ socialUserId })) });
      await call(b.h, other, 'POST', `${BASE}/watchlist/batch`, { items: [{ socialUserId: s.userIds[3] }] });
      await drainBulkWork(b.h.deps);
    });
    after(() => b.h.close());

    test('the file: every stored tweet of the range by a watched account, oldest first, one Tweet per line', async () => {
      const start = new Date(T0 - 24 * HOUR).toISOString();
      const end = new Date(T0).toISOString();
      const queued = await generate(a, start, end);
      // The watchlist is taken when the export is asked for: a later removal does not change it.
      await call(b.h, a, 'POST', `${BASE}/watchlist/batch-remove`, { socialUserIds: [b.sample.userIds[2]] });
      await drainBulkWork(b.h.deps, { crawl: false });

      const res = await call(b.h, a, 'GET', `${BASE}/exports/latest`);
      assert.equal(res.statusCode, 200, res.body);
      const rec = json<{ data: ExportRec }>(res).data;
      assert.equal(rec.id, queued.id);
      assert.equal(rec.status, 'completed');
      assert.equal(rec.format, 'jsonl.gz');
      assert.ok(rec.startedAt && rec.completedAt);
      assert.equal(rec.error, null);

      const expected = await db()
        .selectFrom('tweets')
        .select(['id', 'data', 'created_at'])
        .where('author_id', 'in', b.sample.userIds.slice(0, 3))
        .where('created_at', '>=', start)
        .where('created_at', '<', end)
        .orderBy('created_at')
        .orderBy('seq')
        .execute();
      assert.ok(expected.length > 3 * 24, `${expected.length} tweets`);
      assert.equal(rec.tweetCount, expected.length);

      const l = await link(a, rec.id);
      assert.ok(l.url.startsWith(`https://gw.example.test/downloads/exports/${rec.id}?`), l.url);
      assert.equal(l.sizeBytes, rec.sizeBytes);
      assert.equal(l.sha256, rec.sha256);
      assert.equal(l.expiresAt, new Date(Math.floor(b.clock.ms / 1000) * 1000 + 900_000).toISOString());
      const file = await fetchFile(l.url); // no API key
      assert.equal(file.statusCode, 200);
      assert.equal(file.headers['content-type'], 'application/gzip');
      assert.equal(file.headers['content-length'], String(rec.sizeBytes));
      const gz = file.rawPayload;
      assert.equal(gz.length, rec.sizeBytes);
      assert.equal(createHash('sha256').update(gz).digest('hex'), rec.sha256);

      const lines = gunzipSync(gz).toString('utf8').split('\n');
      assert.equal(lines.pop(), '', 'the file ends with a newline');
      assert.equal(lines.length, expected.length);
      const watched = new Set(b.sample.userIds.slice(0, 3));
      let prev = '';
      lines.forEach((line, i) => {
        assert.equal(line, expected[i]!.data, `line ${i} is the stored Tweet`);
        const t = JSON.parse(line) as Tweet;
        assert.ok(Value.Check(Tweet, t));
        assert.ok(watched.has(t.authorId));
        assert.ok(t.createdAt >= start && t.createdAt < end);
        const key = `${t.createdAt}|${t.id.padStart(20, '0')}`;
        assert.ok(key > prev, 'oldest first, no repeats');
        prev = key;
      });
      assert.ok(lines.some((l) => (JSON.parse(l) as Tweet).authorId === b.sample.userIds[2]), 'the removed account is still in it');
      const partials = join(b.h.config.exports.dir, '.partial');
      assert.deepEqual(existsSync(partials) ? readdirSync(partials) : [], [], 'no partial files left');
    });

    test('the range is [startDate, endDate): a tweet at startDate is in, one at endDate is out', async () => {
      // The watchlist is now accounts 0 and 1 (2 was removed above).
      const rows = await db().selectFrom('tweets').select(['id', 'created_at']).where('author_id', 'in', b.sample.userIds.slice(0, 2)).orderBy('created_at').orderBy('seq').execute();
      const first = rows[10]!;
      const lastOut = rows[40]!;
      // Offsets are normalised to UTC before comparing.
      const startLocal = new Date(Date.parse(first.created_at)).toISOString().replace('Z', '+00:00');
      const rec = await generate(a, startLocal, lastOut.created_at);
      await drainBulkWork(b.h.deps, { crawl: false });
      const l = await link(a, rec.id);
      const ids = gunzipSync((await fetchFile(l.url)).rawPayload)
        .toString('utf8')
        .trim()
        .split('\n')
        .map((x) => (JSON.parse(x) as Tweet).id);
      const want = rows.filter((r) => r.created_at >= first.created_at && r.created_at < lastOut.created_at).map((r) => r.id);
      assert.deepEqual(ids, want);
      assert.equal(ids[0], first.id);
      assert.ok(!ids.includes(lastOut.id));
    });

    test('an empty range gives a completed export of zero tweets and a valid empty gzip', async () => {
      b.clock.advance(1_000);
      const rec = await generate(a, '2021-01-01T00:00:00Z', '2021-01-01T01:00:00Z');
      await drainBulkWork(b.h.deps, { crawl: false });
      const l = await link(a, rec.id);
      const file = await fetchFile(l.url);
      assert.equal(file.statusCode, 200);
      assert.equal(gunzipSync(file.rawPayload).length, 0);
      const latest = json<{ data: ExportRec }>(await call(b.h, a, 'GET', `${BASE}/exports/latest`)).data;
      assert.equal(latest.id, rec.id);
      assert.equal(latest.tweetCount, 0);
    });

    test('download links: no key needed; tampered sig, id or expiry and expired links are 404 in the error envelope', async () => {
      const exports = json<{ items: ExportRec[] }>(await call(b.h, a, 'GET', `${BASE}/exports?limit=100`)).items.filter((e) => e.status === 'completed');
      assert.ok(exports.length >= 2);
      const l = await link(a, exports[0]!.id);
      const u = new URL(l.url);
      const sig = u.searchParams.get('sig')!;
      const expires = u.searchParams.get('expires')!;
      const variants: Record<string, string> = {
        sig: `${u.pathname}?expires=${expires}&sig=${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`,
        id: `/downloads/exports/${exports[1]!.id}?expires=${expires}&sig=${sig}`,
        expires: `${u.pathname}?expires=${Number(expires) + 3600}&sig=${sig}`,
        noSig: `${u.pathname}?expires=${expires}`,
        nothing: u.pathname,
        unknownId: `/downloads/exports/123?expires=${expires}&sig=${sig}`,
        junkId: `/downloads/exports/${'x'.repeat(60)}?expires=${expires}&sig=${sig}`,
        junkExpires: `${u.pathname}?expires=${'9'.repeat(100)}&sig=${sig}`,
        longSig: `${u.pathname}?expires=${expires}&sig=${sig.repeat(10)}`,
      };
      for (const [what, path] of Object.entries(variants)) {
        const res = await b.h.app.inject({ method: 'GET', url: path });
        assert.equal(res.statusCode, 404, `${what}: ${res.body}`);
        assert.equal(errorOf(res).code, 'not_found');
        assert.match(errorOf(res).message, /not valid/);
      }
      assert.equal((await b.h.app.inject({ method: 'GET', url: u.pathname + u.search })).statusCode, 200);
      // (An example link in the document names it; no path does.)
      const paths = Object.keys((b.h.app.swagger() as { paths: Record<string, unknown> }).paths);
      assert.ok(!paths.some((p) => p.startsWith('/downloads/')), 'the link target is not in the OpenAPI document');
      // The link works until expiresAt and not after.
      const saved = b.clock.ms;
      b.clock.ms = Date.parse(l.expiresAt);
      assert.equal((await b.h.app.inject({ method: 'GET', url: u.pathname + u.search })).statusCode, 200);
      b.clock.ms = Date.parse(l.expiresAt) + 1;
      const expired = await b.h.app.inject({ method: 'GET', url: u.pathname + u.search });
      assert.equal(expired.statusCode, 404);
      assert.match(errorOf(expired).message, /expired/);
      b.clock.ms = saved;
      // Another account cannot get a link to it.
      const res = await call(b.h, other, 'GET', `${BASE}/exports/${exports[0]!.id}/download`);
      assert.equal(res.statusCode, 404);
      assert.equal(errorOf(res).code, 'not_found');
    });

    test("exports are the account's own: lists and latest", async () => {
      const otherRec = await generate(other, new Date(T0 - 24 * HOUR).toISOString(), new Date(T0).toISOString());
      await drainBulkWork(b.h.deps, { crawl: false });
      const mine = json<{ items: ExportRec[] }>(await call(b.h, a, 'GET', `${BASE}/exports?limit=100`)).items;
      assert.ok(!mine.some((e) => e.id === otherRec.id));
      const theirs = json<{ data: ExportRec }>(await call(b.h, other, 'GET', `${BASE}/exports/latest`)).data;
      assert.equal(theirs.id, otherRec.id);
      const l = await link(other, theirs.id);
      const lines = gunzipSync((await fetchFile(l.url)).rawPayload).toString('utf8').trim().split('\n');
      assert.equal(lines.length, theirs.tweetCount);
      assert.ok(lines.every((x) => (JSON.parse(x) as Tweet).authorId === b.sample.userIds[3]));
    });

    test('a write that fails midway leaves nothing at the key', async () => {
      const store = new LocalObjectStore(join(b.h.testStore.dataDir, 'atomic'));
      const row = await db().selectFrom('exports').selectAll().where('account_id', '=', a.accountId).where('tweet_count', '>', 20).executeTakeFirstOrThrow();
      const ac = new AbortController();
      let pages = 0;
      const slowDb = b.h.deps.store.db;
      const p = writeExport(slowDb, store, { id: row.id, start: row.start_date, end: row.end_date, objectKey: 'x/file.jsonl.gz' }, { pageSize: 5, pageDelayMs: 20, signal: ac.signal });
      const timer = setInterval(() => {
        if (++pages === 2) ac.abort(new Error('stop'));
      }, 25);
      await assert.rejects(p);
      clearInterval(timer);
      assert.equal(await store.stat('x/file.jsonl.gz'), undefined);
      assert.deepEqual(readdirSync(join(store.root, '.partial')), []);
      const ok = await writeExport(slowDb, store, { id: row.id, start: row.start_date, end: row.end_date, objectKey: 'x/file.jsonl.gz' }, { pageSize: 5, signal: new AbortController().signal });
      assert.equal(ok.tweetCount, row.tweet_count);
      assert.equal(ok.sha256, row.sha256, 'the same bytes as the job wrote');
    });
  });
}
