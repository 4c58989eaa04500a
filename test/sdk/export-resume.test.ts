// Downloads that are cut short: the SDK resumes from the byte it reached with a Range request
// (If-Range on the file's ETag) against the real gateway, through a TCP proxy that drops the
// connection mid-body (or stops sending), and still verifies size and SHA-256; it starts over when
// the server answers the whole file, asks for a fresh link when the one it holds is expiring (or the
// server says it expired), and gives up after its allowance of resumes without leaving a part file.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { NetworkError, NotFoundError, SdgClient, type DownloadProgress } from '../../sdk/src/index.js';
import { startGateway, type Gateway } from './gateway.js';

/** A TCP proxy to the gateway that, while `cuts` > 0, drops a download's connection `afterBodyBytes` into its body. */
class CuttingProxy {
  cuts = 0;
  /** Like cuts, but the connection stays open and silent (a link dead without a word). */
  stalls = 0;
  afterBodyBytes = 0;
  /** The head of every request that went through (method, path, headers). */
  readonly requests: string[] = [];
  private server: Server;
  constructor(private readonly target: number) {
    this.server = createServer((client) => {
      const upstream = createConnection(this.target, '127.0.0.1');
      let cut = false;
      let stall = false;
      let response = Buffer.alloc(0);
      let bodyStart = -1;
      client.on('data', (chunk: Buffer) => {
        // A request line starts a request (a kept-alive connection carries one after another).
        const text = chunk.toString('latin1');
        if (/^[A-Z]+ \//.test(text)) {
          const head = text.split('\r\n\r\n')[0]!;
          this.requests.push(head);
          const download = head.startsWith('GET /downloads/');
          stall = download && this.cuts === 0 && this.stalls > 0;
          cut = download && (this.cuts > 0 || stall);
          if (stall) this.stalls--;
          else if (cut) this.cuts--;
          response = Buffer.alloc(0);
          bodyStart = -1;
        }
        upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => {
        if (!cut) return void client.write(chunk);
        response = Buffer.concat([response, chunk]);
        if (bodyStart < 0) {
          const end = response.indexOf('\r\n\r\n');
          if (end < 0) return;
          bodyStart = end + 4;
        }
        const limit = bodyStart + this.afterBodyBytes;
        if (response.length < limit) return;
        // The bytes up to the cut are delivered and read before the connection drops, as when a
        // link fails mid-transfer (a drop in the same instant could also lose what was in flight).
        upstream.destroy();
        client.write(response.subarray(0, limit), () => {
          if (!stall) setTimeout(() => client.destroy(), 50);
        });
      });
      upstream.on('end', () => client.end());
      const drop = () => {
        client.destroy();
        upstream.destroy();
      };
      upstream.on('error', drop);
      client.on('error', drop);
    });
  }
  listen(): Promise<number> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => resolve((this.server.address() as { port: number }).port)));
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('resuming export downloads', () => {
  let g: Gateway;
  let proxy: CuttingProxy;
  let proxyPort: number;
  let apiKey: string;
  let exportId: string;
  let whole: { size: number; sha256: string };
  let dir: string;
  let linksAsked = 0;
  /** The client's fetch: downloads go through the proxy; links may be made to look about to expire. */
  let linkExpiresSoon = false;
  let stripRange = false;
  /** Resume requests to send with a broken signature (as a link expired by the server's clock answers: 404). */
  let breakResumes = 0;
  const viaProxy: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    if (req.url.includes('/downloads/')) {
      const headers = new Headers(req.headers);
      if (stripRange) headers.delete('range');
      let url = req.url.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${proxyPort}`);
      if (headers.has('range') && breakResumes > 0) {
        breakResumes--;
        url = url.replace(/sig=[^&]+/, 'sig=AAAA');
      }
      return fetch(url, { headers, signal: req.signal });
    }
    const res = await fetch(req);
    if (!/\/exports\/\d+\/download$/.test(new URL(req.url).pathname)) return res;
    linksAsked++;
    if (!linkExpiresSoon) return res;
    const body = (await res.json()) as { data: { expiresAt: string } };
    body.data.expiresAt = new Date(Date.now() + 1_000).toISOString();
    return new Response(JSON.stringify(body), { status: res.status, headers: res.headers });
  };
  const client = (o: { resumes?: number } = {}) => ({ c: new SdgClient({ apiKey, baseUrl: g.url, fetch: viaProxy, retry: { baseDelayMs: 5 } }), o });

  before(async () => {
    g = await startGateway();
    const a = await g.account();
    apiKey = a.apiKey;
    proxy = new CuttingProxy(Number(new URL(g.url).port));
    proxyPort = await proxy.listen();
    dir = mkdtempSync(join(tmpdir(), 'sdk-resume-'));
    const plain = new SdgClient({ apiKey, baseUrl: g.url });
    await plain.addAllToWatchlist(
      g.sample.usernames.slice(0, 4).map((username) => ({ username })),
      { intervalMs: 20 },
    );
    const deadline = Date.now() + 30_000;
    while (((await plain.crawlStatus()).data.lastCompletedCycle?.accountsCompleted ?? 0) < 4) {
      if (Date.now() > deadline) throw new Error('the first crawl did not complete');
      await new Promise((r) => setTimeout(r, 50));
    }
    const end = new Date();
    const file = await plain.exportToFile({ startDate: new Date(end.getTime() - 24 * 3_600_000).toISOString(), endDate: end.toISOString() }, join(dir, 'plain.jsonl.gz'), { intervalMs: 20 });
    exportId = file.export.id;
    whole = { size: file.sizeBytes, sha256: file.sha256 };
    assert.ok(whole.size > 3_000, `a file to cut in three: ${whole.size} bytes`);
  });
  after(async () => {
    await proxy.close();
    await g.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('cut twice, the download resumes from the byte it reached each time and is verified', async () => {
    proxy.cuts = 2;
    proxy.afterBodyBytes = 1_000;
    proxy.requests.length = 0;
    const progress: DownloadProgress[] = [];
    const path = join(dir, 'resumed.jsonl.gz');
    const { c } = client();
    const file = await c.downloadExport(exportId, path, { onDownloadProgress: (p) => progress.push(p) });
    assert.equal(file.sha256, whole.sha256);
    assert.equal(createHash('sha256').update(readFileSync(path)).digest('hex'), whole.sha256);
    assert.equal(existsSync(`${path}.part`), false);
    const heads = proxy.requests.filter((h) => h.startsWith('GET /downloads/'));
    assert.equal(heads.length, 3, heads.join('\n---\n'));
    assert.doesNotMatch(heads[0]!, /^range:/im);
    assert.match(heads[1]!, /^range: bytes=1000-$/im);
    assert.match(heads[2]!, /^range: bytes=2000-$/im);
    assert.match(heads[2]!, new RegExp(`^if-range: "${whole.sha256}"$`, 'im'));
    // Progress counts the file, not the transfers: it never goes back and ends at the size.
    assert.ok(progress.every((p, i) => i === 0 || p.bytes >= progress[i - 1]!.bytes));
    assert.deepEqual(progress.at(-1), { bytes: whole.size, totalBytes: whole.size });
  });

  test('a body that stops coming without the connection closing is resumed once no bytes came for timeoutMs', async () => {
    proxy.stalls = 1;
    proxy.afterBodyBytes = 900;
    proxy.requests.length = 0;
    const c = new SdgClient({ apiKey, baseUrl: g.url, fetch: viaProxy, retry: { baseDelayMs: 5 }, timeoutMs: 300 });
    const started = Date.now();
    const file = await c.downloadExport(exportId, join(dir, 'stalled.jsonl.gz'));
    assert.equal(file.sha256, whole.sha256);
    assert.ok(Date.now() - started >= 300);
    const heads = proxy.requests.filter((h) => h.startsWith('GET /downloads/'));
    assert.equal(heads.length, 2);
    assert.match(heads[1]!, /^range: bytes=900-$/im);
  });

  test('a server that answers the whole file again is read from the start, still verified', async () => {
    proxy.cuts = 1;
    proxy.afterBodyBytes = 1_500;
    proxy.requests.length = 0;
    stripRange = true;
    try {
      const path = join(dir, 'restarted.jsonl.gz');
      const file = await client().c.downloadExport(exportId, path);
      assert.equal(file.sha256, whole.sha256);
      assert.equal(readFileSync(path).length, whole.size);
      assert.equal(proxy.requests.filter((h) => h.startsWith('GET /downloads/')).length, 2);
    } finally {
      stripRange = false;
    }
  });

  test('a link about to expire is asked for again before resuming', async () => {
    proxy.cuts = 1;
    proxy.afterBodyBytes = 500;
    linksAsked = 0;
    linkExpiresSoon = true;
    try {
      const file = await client().c.downloadExport(exportId, join(dir, 'fresh-link.jsonl.gz'));
      assert.equal(file.sha256, whole.sha256);
      assert.equal(linksAsked, 2);
    } finally {
      linkExpiresSoon = false;
    }
  });

  test('a link the server finds expired when resuming (404) is asked for again, once', async () => {
    proxy.cuts = 1;
    proxy.afterBodyBytes = 800;
    linksAsked = 0;
    breakResumes = 1;
    const file = await client().c.downloadExport(exportId, join(dir, 'server-expired.jsonl.gz'));
    assert.equal(file.sha256, whole.sha256);
    assert.equal(linksAsked, 2);
    assert.equal(breakResumes, 0);
    // Twice in a row is not a clock: the 404 stands.
    proxy.cuts = 1;
    breakResumes = 2;
    const path = join(dir, 'really-gone.jsonl.gz');
    await assert.rejects(client().c.downloadExport(exportId, path), (e: unknown) => e instanceof NotFoundError);
    assert.equal(existsSync(`${path}.part`), false);
    breakResumes = 0;
  });

  test('continuePart: a failed call keeps what arrived and the next goes on from it; a wrong or complete part is handled', async () => {
    const path = join(dir, 'continued.jsonl.gz');
    proxy.cuts = 1;
    proxy.afterBodyBytes = 1_200;
    await assert.rejects(client().c.downloadExport(exportId, path, { resumes: 0, continuePart: true }), NetworkError);
    const kept = readFileSync(`${path}.part`);
    assert.equal(kept.length, 1_200);
    proxy.requests.length = 0;
    const file = await client().c.downloadExport(exportId, path, { continuePart: true });
    assert.equal(file.sha256, whole.sha256);
    assert.equal(existsSync(`${path}.part`), false);
    const heads = proxy.requests.filter((h) => h.startsWith('GET /downloads/'));
    assert.equal(heads.length, 1);
    assert.match(heads[0]!, /^range: bytes=1200-$/im);

    // A part that is not this file's beginning: found out at the end, then the file downloaded whole.
    const wrong = join(dir, 'wrong-part.jsonl.gz');
    writeFileSync(`${wrong}.part`, Buffer.alloc(1_000, 7));
    proxy.requests.length = 0;
    assert.equal((await client().c.downloadExport(exportId, wrong, { continuePart: true })).sha256, whole.sha256);
    assert.equal(createHash('sha256').update(readFileSync(wrong)).digest('hex'), whole.sha256);
    const tries = proxy.requests.filter((h) => h.startsWith('GET /downloads/'));
    assert.equal(tries.length, 2);
    assert.match(tries[0]!, /^range: bytes=1000-$/im);
    assert.doesNotMatch(tries[1]!, /^range:/im);

    // A part already complete (a run stopped before its rename): kept as it is, nothing downloaded.
    const done = join(dir, 'complete-part.jsonl.gz');
    writeFileSync(`${done}.part`, readFileSync(path));
    proxy.requests.length = 0;
    assert.equal((await client().c.downloadExport(exportId, done, { continuePart: true })).sha256, whole.sha256);
    assert.equal(proxy.requests.filter((h) => h.startsWith('GET /downloads/')).length, 0);
    assert.equal(existsSync(`${done}.part`), false);
  });

  test('past its allowance of resumes it gives up with a NetworkError and leaves no part file', async () => {
    proxy.cuts = 2;
    proxy.afterBodyBytes = 700;
    const path = join(dir, 'given-up.jsonl.gz');
    await assert.rejects(client().c.downloadExport(exportId, path, { resumes: 1 }), (e: unknown) => {
      assert.ok(e instanceof NetworkError, String(e));
      assert.match(e.message, /cut short 2 times/);
      return true;
    });
    assert.equal(existsSync(path), false);
    assert.equal(existsSync(`${path}.part`), false);
    assert.equal(proxy.cuts, 0);
  });
});
