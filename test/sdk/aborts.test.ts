// What a call ends with when the caller stops it, and a download whose file is shorter than its record:
// the caller's own abort reason (not a NetworkError), a TimeoutError from AbortSignal.timeout() for a
// download too, and an ExportError (not a 416 InvalidRequestError) for the short file.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ExportError, SdgClient } from '../../sdk/src/index.js';
import { envelope, silentServer, stub } from './faults.js';

const FILE = Buffer.from('x'.repeat(3_000));
const SHA = createHash('sha256').update(FILE).digest('hex');

describe('aborts and short files', () => {
  let s: Awaited<ReturnType<typeof stub>>;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sdk-aborts-'));
    s = await stub((req, res) => {
      const path = new URL(req.url!, 'http://x').pathname;
      const link = /^\/social\/v1\/bulk-export\/exports\/(\d+)\/download$/.exec(path);
      if (link) {
        // Export 8's record says 10 bytes more than its file has.
        const data = { id: link[1], url: `${s.url}/downloads/${link[1]}`, expiresAt: new Date(Date.now() + 600_000).toISOString(), sizeBytes: FILE.length + (link[1] === '8' ? 10 : 0), sha256: SHA };
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
      }
      if (path === '/downloads/8') {
        const start = Number(/^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''))?.[1] ?? 0);
        if (start >= FILE.length) return envelope(res, 416, 'range_not_satisfiable', 'beyond the end', undefined, { 'content-range': `bytes */${FILE.length}` });
        return res.writeHead(start ? 206 : 200, { 'content-type': 'application/gzip', ...(start ? { 'content-range': `bytes ${start}-${FILE.length - 1}/${FILE.length}` } : {}) }).end(FILE.subarray(start));
      }
      if (path === '/downloads/9') {
        // A slow file: a byte every 50 ms.
        res.writeHead(200, { 'content-type': 'application/gzip' });
        const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write('x')), 50);
        return;
      }
      envelope(res, 404, 'not_found', 'no');
    });
  });
  after(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("abort(reason) ends a call with the caller's reason, not a NetworkError", async () => {
    const silent = await silentServer();
    try {
      const client = new SdgClient({ apiKey: 'sdg_test', baseUrl: silent.url });
      const reason = new Error('user cancelled');
      const ac = new AbortController();
      setTimeout(() => ac.abort(reason), 100);
      await assert.rejects(client.tweet('1', { signal: ac.signal }), (e: unknown) => e === reason);
      const ac2 = new AbortController();
      setTimeout(() => ac2.abort(reason), 100);
      await assert.rejects(client.balance({ signal: ac2.signal }), (e: unknown) => e === reason);
    } finally {
      await silent.close();
    }
  });

  test('a download stopped by AbortSignal.timeout() ends in a TimeoutError', async () => {
    const client = new SdgClient({ apiKey: 'sdg_test', baseUrl: s.url });
    const path = join(dir, 'slow.gz');
    await assert.rejects(client.downloadExport('9', path, { signal: AbortSignal.timeout(300) }), (e: unknown) => (e as Error).name === 'TimeoutError');
    const reason = new Error('user cancelled');
    const ac = new AbortController();
    setTimeout(() => ac.abort(reason), 300);
    await assert.rejects(client.downloadExport('9', path, { signal: ac.signal }), (e: unknown) => e === reason);
  });

  test('a file shorter than its record is an ExportError, not the 416 of the resume that finds its end', async () => {
    const client = new SdgClient({ apiKey: 'sdg_test', baseUrl: s.url, retry: { baseDelayMs: 1 } });
    const path = join(dir, 'short.gz');
    await assert.rejects(client.downloadExport('8', path), (e: unknown) => {
      assert.ok(e instanceof ExportError, String(e));
      assert.equal(e.exportId, '8');
      assert.match(e.message, /ends before byte 3000, its record says 3010 bytes/);
      return true;
    });
    assert.equal(existsSync(`${path}.part`), false);
  });
});
