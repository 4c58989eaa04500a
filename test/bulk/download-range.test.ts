// Resuming a download: a download link answers a byte range (206) so that a transfer cut short goes
// on where it stopped, checked by If-Range against the file's ETag; the cases the RFC says to
// ignore get the whole file, and a range past the end is 416 with the file's size.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { drainBulkWork } from '../../src/wiring/drain-jobs.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, type TestAccount } from '../helpers/harness.js';
import { BASE, bulkHarness, call, HOUR, T0, type BulkHarness } from './helpers.js';

interface Link {
  id: string;
  url: string;
  sizeBytes: number;
  sha256: string;
}

for (const backend of backends()) {
  describe(`download ranges (${backend})`, () => {
    let b: BulkHarness;
    let a: TestAccount;
    let link: Link;
    let whole: Buffer;
    const get = (headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET', url = link.url) => {
      const u = new URL(url);
      return b.h.app.inject({ method, url: u.pathname + u.search, headers });
    };

    before(async () => {
      b = await bulkHarness(backend);
      a = await b.h.account();
      await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items: b.sample.userIds.slice(0, 3).map((socialUserId) => ({ socialUserId })) });
      await drainBulkWork(b.h.deps);
      const gen = await call(b.h, a, 'POST', `${BASE}/exports/generate`, { startDate: new Date(T0 - 24 * HOUR).toISOString(), endDate: new Date(T0).toISOString() });
      assert.equal(gen.statusCode, 202, gen.body);
      await drainBulkWork(b.h.deps, { crawl: false });
      const res = await call(b.h, a, 'GET', `${BASE}/exports/${json<{ data: { id: string } }>(gen).data.id}/download`);
      assert.equal(res.statusCode, 200, res.body);
      link = json<{ data: Link }>(res).data;
      const full = await get();
      assert.equal(full.statusCode, 200);
      whole = full.rawPayload;
      assert.ok(whole.length > 1000, `${whole.length} bytes`);
      assert.equal(createHash('sha256').update(whole).digest('hex'), link.sha256);
    });
    after(() => b.h.close());

    test('the whole file says it takes ranges and names its validators', async () => {
      const res = await get();
      assert.equal(res.headers['accept-ranges'], 'bytes');
      assert.equal(res.headers.etag, `"${link.sha256}"`);
      assert.match(String(res.headers['last-modified']), /^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
      assert.equal(res.headers['content-range'], undefined);
    });

    test('If-None-Match naming the file (its ETag, weak or in a list, or *) is 304 without a body; another ETag gets the file', async () => {
      for (const inm of [`"${link.sha256}"`, `W/"${link.sha256}"`, `"other", "${link.sha256}"`, '*']) {
        const res = await get({ 'if-none-match': inm });
        assert.equal(res.statusCode, 304, inm);
        assert.equal(res.rawPayload.length, 0);
        assert.equal(res.headers.etag, `"${link.sha256}"`);
      }
      const other = await get({ 'if-none-match': '"0000"' });
      assert.equal(other.statusCode, 200);
      assert.deepEqual(other.rawPayload, whole);
    });

    test('a download cut short resumes from the byte it reached, and the parts make the file', async () => {
      const cut = 1000;
      const first = await get({ range: `bytes=0-${cut - 1}` });
      assert.equal(first.statusCode, 206);
      assert.equal(first.headers['content-range'], `bytes 0-${cut - 1}/${whole.length}`);
      assert.equal(first.headers['content-length'], String(cut));
      assert.ok(first.rawPayload.equals(whole.subarray(0, cut)));
      // As curl -C - and the SDK ask: the rest, only if the file is the one begun.
      const rest = await get({ range: `bytes=${cut}-`, 'if-range': String(first.headers.etag) });
      assert.equal(rest.statusCode, 206);
      assert.equal(rest.headers['content-range'], `bytes ${cut}-${whole.length - 1}/${whole.length}`);
      assert.equal(rest.headers['content-length'], String(whole.length - cut));
      const joined = Buffer.concat([first.rawPayload, rest.rawPayload]);
      assert.equal(createHash('sha256').update(joined).digest('hex'), link.sha256);
      assert.ok(gunzipSync(joined).length > 0);
    });

    test('a suffix range, a range running past the end, overlapping ranges and If-Range by date', async () => {
      const n = whole.length;
      const suffix = await get({ range: 'bytes=-50' });
      assert.equal(suffix.statusCode, 206);
      assert.equal(suffix.headers['content-range'], `bytes ${n - 50}-${n - 1}/${n}`);
      assert.ok(suffix.rawPayload.equals(whole.subarray(n - 50)));
      // The last N bytes of a shorter file: all of it (RFC 9110, 14.1.3), as curl -r -N asks.
      const all = await get({ range: `bytes=-${n + 1000}` });
      assert.equal(all.statusCode, 206);
      assert.equal(all.headers['content-range'], `bytes 0-${n - 1}/${n}`);
      assert.ok(all.rawPayload.equals(whole));
      // The unit in any case.
      const upper = await get({ range: 'BYTES=0-4' });
      assert.equal(upper.statusCode, 206);
      assert.equal(upper.headers['content-range'], `bytes 0-4/${n}`);
      const long = await get({ range: `bytes=10-${n * 10}` });
      assert.equal(long.statusCode, 206);
      assert.equal(long.headers['content-range'], `bytes 10-${n - 1}/${n}`);
      assert.ok(long.rawPayload.equals(whole.subarray(10)));
      const merged = await get({ range: 'bytes=0-9,5-19' });
      assert.equal(merged.statusCode, 206);
      assert.ok(merged.rawPayload.equals(whole.subarray(0, 20)));
      const byDate = await get({ range: 'bytes=7-8', 'if-range': String(suffix.headers['last-modified']) });
      assert.equal(byDate.statusCode, 206);
      assert.ok(byDate.rawPayload.equals(whole.subarray(7, 9)));
    });

    test('what the RFC says to ignore gets the whole file', async () => {
      const cases: Record<string, string>[] = [
        { range: 'bytes=0-9,20-29' }, // several parts: no multipart answer
        { range: 'bytes=abc' }, // malformed
        { range: 'bytes=5-2' }, // the last position before the first: invalid (RFC 9110, 14.1.1)
        { range: 'items=0-5' }, // another unit
        { range: 'bytes=0-9', 'if-range': '"another-file"' }, // the file changed since
        { range: 'bytes=0-9', 'if-range': `W/"${link.sha256}"` }, // a weak validator never matches
        { range: 'bytes=0-9', 'if-range': 'Mon, 01 Jan 2024 00:00:00 GMT' },
      ];
      for (const headers of cases) {
        const res = await get(headers);
        assert.equal(res.statusCode, 200, JSON.stringify(headers));
        assert.equal(res.headers['content-range'], undefined);
        assert.ok(res.rawPayload.equals(whole), JSON.stringify(headers));
      }
      // HEAD: Range is defined for GET only; the whole file's headers, no body.
      const head = await get({ range: 'bytes=0-9' }, 'HEAD');
      assert.equal(head.statusCode, 200);
      assert.equal(head.headers['content-length'], String(whole.length));
      assert.equal(head.rawPayload.length, 0);
    });

    test('a range starting past the end is 416 with the size; a bad link stays 404 whatever the range', async () => {
      for (const range of [`bytes=${whole.length}-`, `bytes=${whole.length + 5}-${whole.length + 9}`]) {
        const res = await get({ range });
        assert.equal(res.statusCode, 416, range);
        assert.equal(res.headers['content-range'], `bytes */${whole.length}`);
        const err = errorOf(res);
        assert.equal(err.code, 'range_not_satisfiable');
        assert.deepEqual(err.details, { sizeBytes: whole.length });
      }
      const forged = link.url.replace(/sig=[^&]+/, 'sig=AAAA');
      const res = await get({ range: 'bytes=0-9' }, 'GET', forged);
      assert.equal(res.statusCode, 404);
      assert.equal(errorOf(res).code, 'not_found');
    });

    test('over a real connection, a part carries exactly the bytes its Content-Length says', async () => {
      const address = await b.h.app.listen({ host: '127.0.0.1', port: 0 });
      const u = new URL(link.url);
      const from = 333;
      const res = await fetch(`${address}${u.pathname}${u.search}`, { headers: { range: `bytes=${from}-` } });
      assert.equal(res.status, 206);
      const body = Buffer.from(await res.arrayBuffer());
      assert.equal(res.headers.get('content-length'), String(whole.length - from));
      assert.ok(body.equals(whole.subarray(from)));
    });

    test('/metrics counts the downloads served, whole or part, complete or cut, and the bytes of those completed', async () => {
      const d = b.h.deps.metrics.downloads;
      const snap = () => JSON.parse(JSON.stringify({ counts: d.counts, bytes: d.bytes })) as { counts: typeof d.counts; bytes: number };
      const before = snap();
      assert.equal((await get()).statusCode, 200);
      assert.equal((await get({ range: 'bytes=100-' })).statusCode, 206);
      assert.equal((await get({}, 'HEAD')).statusCode, 200);
      let after = snap();
      assert.equal(after.counts.whole.complete - before.counts.whole.complete, 1, 'HEAD is not a download');
      assert.equal(after.counts.part.complete - before.counts.part.complete, 1);
      assert.equal(after.bytes - before.bytes, whole.length + whole.length - 100);

      // A transfer the client drops part-way: the file's stream gives its first bytes, then waits.
      const objects = b.h.deps.bulk.objects;
      const real = objects.createReadStream.bind(objects);
      const { PassThrough } = await import('node:stream');
      const stalled = new PassThrough();
      objects.createReadStream = () => {
        stalled.write(whole.subarray(0, 100));
        return stalled;
      };
      try {
        const address = `http://127.0.0.1:${(b.h.app.server.address() as { port: number }).port}`;
        const u = new URL(link.url);
        const ac = new AbortController();
        const res = await fetch(`${address}${u.pathname}${u.search}`, { signal: ac.signal });
        const reader = res.body!.getReader();
        assert.ok((await reader.read()).value!.length > 0, 'the first bytes came');
        ac.abort();
        await reader.read().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 200));
      } finally {
        objects.createReadStream = real;
        stalled.destroy();
      }
      after = snap();
      assert.equal(after.counts.whole.cut - before.counts.whole.cut, 1);
      assert.equal(after.counts.whole.complete - before.counts.whole.complete, 1, 'the cut one is not complete');
      const text = (await b.h.app.inject({ url: '/metrics' })).body;
      assert.match(text, new RegExp(`^sdg_export_downloads_total\\{answer="whole",outcome="cut"\\} ${after.counts.whole.cut}$`, 'm'));
      assert.match(text, new RegExp(`^sdg_export_download_bytes_total ${after.bytes}$`, 'm'));
    });
  });
}
