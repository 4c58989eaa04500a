// Brotli is never decoded: Node 20's (1.1.0) has the decoder's out-of-bounds write (CVE-2026-111497)
// and no fix will come for Node 20. Outbound calls go through outboundFetch, which asks for gzip or
// deflate only and refuses a Brotli-encoded answer before any decoder is made; request bodies are
// never decompressed. Each test counts the Brotli decoders made in this process (zlib's
// createBrotliDecompress, which fetch calls), all on loopback.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';
import { ViemWalletService } from '../../src/connectors/wallet/wallet-service.js';
import { AppError } from '../../src/errors/app-error.js';
import { BlueskySource } from '../../src/sources/bluesky/bluesky-source.js';
import { MemoryIdMap } from '../../src/sources/bluesky/id-map.js';
import { namesBrotli, outboundFetch, RefusedEncodingError, withAcceptedEncodings } from '../../src/sources/outbound-fetch.js';
import { SourceError } from '../../src/sources/types.js';
import { XSource } from '../../src/sources/x/x-source.js';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { startHarness } from '../helpers/harness.js';
import { repoRoot } from '../helpers/processes.js';

let decoders = 0;
const createBrotliDecompress = zlib.createBrotliDecompress;
// Read-only but configurable on Node's zlib; fetch (Node's and undici's) looks it up at each call.
Object.defineProperty(zlib, 'createBrotliDecompress', {
  value: (...args: Parameters<typeof createBrotliDecompress>) => {
    decoders++;
    return createBrotliDecompress(...args);
  },
});

const USER = { data: { id: '2244994945', username: 'XDevelopers', name: 'Developers', created_at: '2013-12-14T04:35:55.000Z', public_metrics: { followers_count: 1, following_count: 1, tweet_count: 1, listed_count: 1 } } };

interface Upstream {
  url: string;
  /** The request headers it was sent, in order. */
  seen: IncomingMessage['headers'][];
  /** What it answers, as JSON; `encoding` overrides the path's (for clients that choose the path). */
  answer: { body: unknown; encoding?: 'br' };
  close(): Promise<void>;
}

/** Answers every request with `answer.body`, encoded as the path says (/br/..., /gzip/..., else plain) or as `answer.encoding` says; /redirect goes to /br/. */
async function upstream(): Promise<Upstream> {
  const seen: IncomingMessage['headers'][] = [];
  const answer: Upstream['answer'] = { body: USER };
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    const path = req.url ?? '/';
    if (path.startsWith('/redirect')) {
      res.writeHead(302, { location: '/br/' }).end();
      return;
    }
    req.resume();
    req.on('end', () => {
      const json = Buffer.from(JSON.stringify(answer.body));
      if (answer.encoding === 'br' || path.startsWith('/br')) res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' }).end(zlib.brotliCompressSync(json));
      else if (path.startsWith('/gzip')) res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(zlib.gzipSync(json));
      else res.writeHead(200, { 'content-type': 'application/json' }).end(json);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, answer, close: () => new Promise((r) => server.close(() => r())) };
}

describe('outboundFetch', () => {
  let up: Upstream;
  before(async () => {
    up = await upstream();
  });
  after(() => up.close());

  test("Node's own fetch decodes a Brotli answer it did not ask for (what outboundFetch prevents)", async () => {
    const before = decoders;
    const res = await fetch(`${up.url}/br/`);
    assert.deepEqual(await res.json(), USER);
    assert.equal(decoders, before + 1);
  });

  test('refuses a Brotli answer before any decoder is made, also behind a redirect', async () => {
    const before = decoders;
    for (const path of ['/br/', '/redirect']) {
      await assert.rejects(outboundFetch(`${up.url}${path}`), (err: Error) => {
        assert.ok(err.cause instanceof RefusedEncodingError, String(err.cause));
        assert.match((err.cause as Error).message, /Content-Encoding "br"/);
        return true;
      });
    }
    assert.equal(decoders, before);
  });

  test('asks for gzip and deflate only, whatever the caller asked for, and decodes gzip', async () => {
    const res = await outboundFetch(`${up.url}/gzip/`, { headers: { 'Accept-Encoding': 'br', 'x-kept': 'yes' } });
    assert.deepEqual(await res.json(), USER);
    const h = up.seen.at(-1)!;
    assert.equal(h['accept-encoding'], 'gzip, deflate');
    assert.equal(h['x-kept'], 'yes');
    await outboundFetch(new URL(`${up.url}/plain/`));
    assert.equal(up.seen.at(-1)!['accept-encoding'], 'gzip, deflate');
  });

  test("its undici is past the 6.x fixes of 6.27.0, which Node 20's bundled copy lacks", () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'node_modules/undici/package.json'), 'utf8')) as { version: string };
    const [major, minor] = version.split('.').map(Number);
    assert.equal(major, 6, `undici ${version}: the 6.x line is the one whose handler API Node 20's fetch shares`);
    assert.ok(minor! >= 27, `undici ${version}`);
  });

  test('the header rewrite keeps every other header, and refuses a form fetch never passes', () => {
    assert.deepEqual(withAcceptedEncodings({ a: '1', 'Accept-Encoding': 'br' }), { a: '1', 'accept-encoding': 'gzip, deflate' });
    assert.deepEqual(withAcceptedEncodings(null), { 'accept-encoding': 'gzip, deflate' });
    assert.throws(() => withAcceptedEncodings(['a', '1', 'accept-encoding', 'br']), TypeError);
    assert.throws(() => withAcceptedEncodings(new Map([['accept-encoding', 'br']]) as never), TypeError);
    assert.equal(namesBrotli('gzip, BR'), true);
    assert.equal(namesBrotli('brotli'), false);
    assert.equal(namesBrotli('gzip'), false);
  });

  test('the X source, the Bluesky source and the wallet connector use it by default', async () => {
    const before = decoders;
    const x = new XSource({ bearerToken: 'token', baseUrl: `${up.url}/br` });
    await assert.rejects(x.getUserByUsername('XDevelopers'), (err: unknown) => {
      assert.ok(err instanceof SourceError, String(err));
      // It answered, in an encoding we do not read: 502 upstream_error, not an outage.
      assert.equal(err.kind, 'bad_response');
      assert.match(err.message, /Content-Encoding "br"/);
      assert.ok(!err.message.includes('127.0.0.1'), err.message);
      return true;
    });
    // The same source reads a plain answer (the refusal is the encoding's, not the path's).
    const plain = new XSource({ bearerToken: 'token', baseUrl: up.url });
    assert.equal((await plain.getUserByUsername('XDevelopers')).id, USER.data.id);

    // The AppView's paths are @atproto/api's (/xrpc/...): the server answers them all with Brotli.
    const bsky = new BlueskySource({ appViewUrl: up.url, idMap: new MemoryIdMap() });
    up.answer.encoding = 'br';
    try {
      await assert.rejects(bsky.getUserByUsername('alice.test'), (err: unknown) => {
        assert.ok(err instanceof SourceError && err.kind === 'bad_response', String(err));
        assert.match(err.message, /Content-Encoding "br"/);
        return true;
      });
      assert.match(up.seen.at(-1)!['accept-encoding'] ?? '', /^gzip, deflate$/);
    } finally {
      up.answer.encoding = undefined;
    }

    up.answer.body = { jsonrpc: '2.0', id: 0, result: '0x5' };
    try {
      const wallet = new ViemWalletService([{ name: 'test', chainId: 5, rpcUrl: `${up.url}/br`, symbol: 'ETH', decimals: 18 }], { retryCount: 0 });
      await assert.rejects(wallet.getBalance('0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1'), (err: unknown) => {
        assert.ok(err instanceof AppError, String(err));
        assert.equal(err.code, 'upstream_error');
        assert.equal(err.status, 502);
        assert.match(err.message, /Content-Encoding "br"/);
        // The RPC endpoint's host is the operator's: not in what the client is told.
        assert.ok(!JSON.stringify({ message: err.message, details: err.details }).includes('127.0.0.1'), err.message);
        return true;
      });
    } finally {
      up.answer.body = USER;
    }
    assert.equal(decoders, before);
  });
});

describe('request bodies', () => {
  test('a Brotli-encoded body is refused (415, saying to send it as is), never decoded, and charges nothing', async () => {
    const h = await startHarness('sqlite');
    try {
      const a = await h.account({ credits: 1_000 });
      const before = decoders;
      const res = await h.app.inject({
        method: 'POST',
        url: '/social/v1/bulk-export/watchlist/batch',
        headers: { 'x-api-key': a.apiKey, 'content-type': 'application/json', 'content-encoding': 'br' },
        payload: zlib.brotliCompressSync(Buffer.from(JSON.stringify({ items: [{ username: 'someone' }] }))),
      });
      assert.equal(res.statusCode, 415, res.body);
      assert.equal(res.json().error.code, 'unsupported_media_type');
      assert.match(res.json().error.message, /without Content-Encoding/);
      assert.equal(res.headers['accept-encoding'], 'identity');
      assert.equal(decoders, before);
      assert.equal((await getBalance(h.deps.store.db, a.accountId))?.balance, 1_000);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 1_000);
    } finally {
      await h.close();
    }
  });
});
