// The S3 object store against a real S3 implementation that checks signatures (s3rver behind a front
// that refuses unsigned requests, started here): upload, read, delete, atomic failure; presigned
// downloads through the gateway, and tampered, stripped and expired URLs refused by the S3 server.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { isStoreUnavailable } from '../../src/errors/store-unavailable.js';
import { S3ObjectStore } from '../../src/objects/s3-object-store.js';
import { LOCAL_S3_CREDENTIALS, startLocalS3, type LocalS3 } from '../../deploy/local-s3.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, type TestAccount } from '../helpers/harness.js';
import { BASE, call } from '../bulk/helpers.js';
import { completedExport, downloadLink, objectsHarness, type ObjectsHarness } from './helpers.js';

async function readAll(s: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

let s3: LocalS3;
before(async () => {
  s3 = await startLocalS3();
});
after(() => s3.close());

test('a store that stops answering (a partition): a put and a stat fail after the socket timeout, they do not wait for it', async () => {
  // Accepts connections and reads them, and never answers: what a partitioned S3 looks like.
  const held = new Set<import('node:net').Socket>();
  const { createServer } = await import('node:net');
  const silent = createServer((socket) => {
    held.add(socket);
    socket.on('data', () => undefined).on('error', () => undefined);
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as import('node:net').AddressInfo).port;
  const store = new S3ObjectStore({ bucket: 'b', endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true, publicEndpoint: undefined, credentials: LOCAL_S3_CREDENTIALS, socketTimeoutMs: 300 });
  try {
    const outcome = (p: Promise<unknown>) =>
      Promise.race([p.then(() => 'answered', (e: Error) => e.message), new Promise<string>((r) => setTimeout(r, 20_000, 'still waiting'))]);
    assert.match(await outcome(store.stat('exports/a/1.jsonl.gz')), /timed out after 300 ms of inactivity/);
    assert.match(await outcome(store.put('exports/a/2.jsonl.gz', Readable.from([Buffer.from('x')]))), /timed out after 300 ms of inactivity/);
    // The object store's failures are not the database's: a job that meets one does not report a storage outage.
    await assert.rejects(store.stat('exports/a/3.jsonl.gz'), (err) => !isStoreUnavailable(err));
  } finally {
    store.close();
    for (const s of held) s.destroy();
    await new Promise((r) => silent.close(r));
  }
});

test('an S3 store that refuses connections: its ECONNREFUSED is not taken for the database being unavailable', async () => {
  const { createServer } = await import('node:net');
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as import('node:net').AddressInfo).port;
  await new Promise((r) => probe.close(r));
  const store = new S3ObjectStore({ bucket: 'b', endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true, publicEndpoint: undefined, credentials: LOCAL_S3_CREDENTIALS });
  try {
    for (const attempt of [() => store.stat('exports/a/1.jsonl.gz'), () => store.put('exports/a/2.jsonl.gz', Readable.from([Buffer.from('x')]))]) {
      await assert.rejects(attempt(), (err: Error & { code?: string }) => {
        assert.match(`${err.code} ${err.message}`, /ECONNREFUSED/);
        assert.equal(isStoreUnavailable(err), false);
        return true;
      });
    }
    // The same code from the database's client is still the database's.
    assert.equal(isStoreUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })), true);
  } finally {
    store.close();
  }
});

describe('S3 object store', () => {
  let store: S3ObjectStore;
  before(() => {
    store = new S3ObjectStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, publicEndpoint: undefined, credentials: LOCAL_S3_CREDENTIALS });
  });
  after(() => store.close());

  test('put streams a body in parts, stat and read give it back, delete removes it (twice is fine)', async () => {
    // 13 MiB: three parts of a multipart upload.
    const chunks = Array.from({ length: 13 }, (_, i) => Buffer.alloc(1024 * 1024, i));
    const want = Buffer.concat(chunks);
    const info = await store.put('exports/acc/1.jsonl.gz', Readable.from(chunks));
    assert.equal(info.sizeBytes, want.length);
    assert.equal((await store.stat('exports/acc/1.jsonl.gz'))?.sizeBytes, want.length);
    const got = await readAll(store.createReadStream('exports/acc/1.jsonl.gz'));
    assert.ok(got.equals(want));
    // A ranged read (a resumed download): both ends inclusive, across a part boundary.
    const from = 5 * 1024 * 1024 - 3;
    const part = await readAll(store.createReadStream('exports/acc/1.jsonl.gz', { start: from, end: from + 9 }));
    assert.ok(part.equals(want.subarray(from, from + 10)), `bytes ${from} to ${from + 9}`);
    await store.delete('exports/acc/1.jsonl.gz');
    assert.equal(await store.stat('exports/acc/1.jsonl.gz'), undefined);
    await store.delete('exports/acc/1.jsonl.gz');
    await assert.rejects(readAll(store.createReadStream('exports/acc/1.jsonl.gz')));
  });

  test('a body that fails mid-upload leaves nothing at the key, not even the previous parts', async () => {
    const failing = Readable.from(
      (function* () {
        for (let i = 0; i < 7; i++) yield Buffer.alloc(1024 * 1024, 1);
        throw new Error('the export failed');
      })(),
    );
    await assert.rejects(store.put('exports/acc/2.jsonl.gz', failing), /the export failed/);
    assert.equal(await store.stat('exports/acc/2.jsonl.gz'), undefined);
  });

  test('a failed upload asks the store to abort its multipart upload, and never completes it', async () => {
    // What the client sends, seen through the SDK's middleware on this store's own client.
    const watched = new S3ObjectStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, publicEndpoint: undefined, credentials: LOCAL_S3_CREDENTIALS });
    const sent: Array<{ command: string; uploadId?: string; status?: number }> = [];
    (watched as unknown as { s3: S3Client }).s3.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { UploadId?: string };
        const entry: (typeof sent)[number] = { command: String(context.commandName), ...(input.UploadId ? { uploadId: input.UploadId } : {}) };
        sent.push(entry);
        try {
          const out = await next(args);
          const created = (out.output as { UploadId?: string }).UploadId;
          if (created) entry.uploadId = created;
          return out;
        } catch (err) {
          entry.status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
          throw err;
        }
      },
      { step: 'initialize', name: 'watchCommands' },
    );
    try {
      const failing = Readable.from(
        (function* () {
          for (let i = 0; i < 12; i++) yield Buffer.alloc(1024 * 1024, 2);
          throw new Error('the export failed late');
        })(),
      );
      await assert.rejects(watched.put('exports/acc/3.jsonl.gz', failing), /the export failed late/, "the body's error is the cause even when the abort is refused");
      const created = sent.find((c) => c.command === 'CreateMultipartUploadCommand');
      assert.ok(created?.uploadId, 'a multipart upload was started');
      assert.ok(sent.some((c) => c.command === 'UploadPartCommand' && c.uploadId === created.uploadId), 'parts were uploaded');
      const abort = sent.find((c) => c.command === 'AbortMultipartUploadCommand');
      assert.equal(abort?.uploadId, created.uploadId, 'the same upload is aborted');
      assert.ok(!sent.some((c) => c.command === 'CompleteMultipartUploadCommand'), 'never completed');
      assert.equal(await watched.stat('exports/acc/3.jsonl.gz'), undefined);
    } finally {
      watched.close();
    }
  });

  test('keys are checked as on the local store', async () => {
    await assert.rejects(store.put('../x', Readable.from([Buffer.from('x')])), /Invalid object key/);
    assert.throws(() => store.createReadStream('/abs'), /Invalid object key/);
  });

  test('a presigned URL downloads without credentials; altered, stripped or expired ones are refused', async () => {
    await store.put('exports/acc/3.jsonl.gz', Readable.from([Buffer.from('three')]));
    await store.put('exports/other/4.jsonl.gz', Readable.from([Buffer.from('four')]));
    const now = new Date();
    const p = await store.presignGet('exports/acc/3.jsonl.gz', { ttlSeconds: 60, now, filename: 'export-3.jsonl.gz' });
    assert.equal(p.expiresAt, new Date(Math.floor(now.getTime() / 1000) * 1000 + 60_000).toISOString());
    let r = await fetch(p.url);
    assert.equal(r.status, 200);
    assert.equal(await r.text(), 'three');
    assert.equal(r.headers.get('content-disposition'), 'attachment; filename="export-3.jsonl.gz"');
    // The same URL resumes a download: a Range header is not part of the signature.
    r = await fetch(p.url, { headers: { range: 'bytes=2-' } });
    assert.equal(r.status, 206);
    assert.equal(await r.text(), 'ree');

    const refused = async (url: string, code: string) => {
      const res = await fetch(url);
      const body = await res.text();
      assert.equal(res.status, 403, `${url}: ${body}`);
      assert.match(body, new RegExp(`<Code>${code}</Code>`));
    };
    // Another object with the same signature.
    await refused(p.url.replace('/acc/3.jsonl.gz', '/other/4.jsonl.gz'), 'SignatureDoesNotMatch');
    // A longer life.
    await refused(p.url.replace('X-Amz-Expires=60', 'X-Amz-Expires=600'), 'SignatureDoesNotMatch');
    // Another signature.
    const sig = /X-Amz-Signature=([0-9a-f]+)/.exec(p.url)![1]!;
    await refused(p.url.replace(sig, sig.replace(/^./, (c) => (c === '0' ? '1' : '0'))), 'SignatureDoesNotMatch');
    // No signature at all (the plain object URL, or the presigned one without its query).
    await refused(p.url.split('?')[0]!, 'AccessDenied');
    // Signed two minutes ago for one minute.
    const old = await store.presignGet('exports/acc/3.jsonl.gz', { ttlSeconds: 60, now: new Date(Date.now() - 120_000), filename: 'x' });
    r = await fetch(old.url);
    const body = await r.text();
    assert.equal(r.status, 403);
    assert.match(body, /Request has expired/);
  });

  test('wrong credentials are refused by the server', async () => {
    const bad = new S3ObjectStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, publicEndpoint: undefined, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'wrong' } });
    try {
      await assert.rejects(bad.put('exports/acc/5.jsonl.gz', Readable.from([Buffer.from('x')])), /signature/i);
      assert.equal(await store.stat('exports/acc/5.jsonl.gz'), undefined);
    } finally {
      bad.close();
    }
  });

  test('S3_PUBLIC_ENDPOINT: links are signed for the address clients use', async () => {
    const pub = new S3ObjectStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, publicEndpoint: 'https://files.example.test', credentials: LOCAL_S3_CREDENTIALS });
    try {
      const p = await pub.presignGet('exports/acc/3.jsonl.gz', { ttlSeconds: 60, now: new Date(), filename: 'x' });
      assert.ok(p.url.startsWith('https://files.example.test/exports/exports/acc/3.jsonl.gz?'), p.url);
    } finally {
      pub.close();
    }
  });
});

for (const backend of backends()) {
  describe(`download links on S3 (${backend})`, () => {
    let o: ObjectsHarness;
    let a: TestAccount;
    let other: TestAccount;
    before(async () => {
      o = await objectsHarness(backend, s3, { EXPORT_LINK_TTL_SECONDS: '120' });
      a = await o.h.account();
      other = await o.h.account();
    });
    after(() => o.close());

    test('S3_BUCKET switches the store; the download answers a presigned URL of the bucket that serves the file', async () => {
      assert.ok(o.h.deps.bulk.objects instanceof S3ObjectStore);
      const rec = await completedExport(o, a, o.userIds[0]!);
      const l = await downloadLink(o, a, rec.id);
      assert.ok(l.url.startsWith(`${s3.endpoint}/${s3.bucket}/exports/${a.accountId}/${rec.id}.jsonl.gz?`), l.url);
      assert.match(l.url, /X-Amz-Expires=120&/);
      assert.equal(l.expiresAt, new Date(Math.floor(o.clock.ms / 1000) * 1000 + 120_000).toISOString());
      assert.equal(l.sizeBytes, rec.sizeBytes);
      const r = await fetch(l.url); // no API key, no credentials
      assert.equal(r.status, 200);
      const gz = Buffer.from(await r.arrayBuffer());
      assert.equal(gz.length, rec.sizeBytes);
      assert.equal(createHash('sha256').update(gz).digest('hex'), rec.sha256);
      const lines = gunzipSync(gz).toString('utf8').trimEnd().split('\n');
      assert.ok(lines.length > 5);
      for (const line of lines) assert.equal((JSON.parse(line) as { authorId: string }).authorId, o.userIds[0]);

      // Another account's export is not found; the link cannot be bent to another account's object.
      const res = await call(o.h, other, 'GET', `${BASE}/exports/${rec.id}/download`);
      assert.equal(res.statusCode, 404);
      assert.equal(errorOf(res).code, 'not_found');
      const theirs = await completedExport(o, other, o.userIds[1]!);
      const bent = l.url.replace(`/${a.accountId}/${rec.id}.jsonl.gz`, `/${other.accountId}/${theirs.id}.jsonl.gz`);
      assert.equal((await fetch(bent)).status, 403);
    });

    test('a link given longer ago than EXPORT_LINK_TTL_SECONDS is refused by the S3 server', async () => {
      const rec = await completedExport(o, a, o.userIds[2]!);
      const saved = o.clock.ms;
      o.clock.ms = Date.now() - 125_000; // the gateway gave this link 125 s ago, for 120 s
      try {
        const l = await downloadLink(o, a, rec.id);
        assert.ok(Date.parse(l.expiresAt) < Date.now());
        const r = await fetch(l.url);
        assert.equal(r.status, 403);
        assert.match(await r.text(), /Request has expired/);
      } finally {
        o.clock.ms = saved;
      }
    });

    test('an export that is not completed has no link', async () => {
      const res = await call(o.h, a, 'POST', `${BASE}/exports/generate`, { startDate: new Date(o.clock.ms - 3_600_000).toISOString(), endDate: new Date(o.clock.ms).toISOString() });
      const id = json<{ data: { id: string } }>(res).data.id;
      const d = await call(o.h, a, 'GET', `${BASE}/exports/${id}/download`);
      assert.equal(d.statusCode, 409);
      assert.equal(errorOf(d).code, 'export_not_ready');
    });
  });
}
