// The object store's check at start: a bucket that does not answer, does not exist or refuses the
// credentials, or an export directory that cannot be written, is said in one warning when the worker
// starts, naming what to fix; before, the first sign was an export failing for good after its three
// attempts (a minute and a half later). Against the signature-checking local S3 server.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LOCAL_S3_CREDENTIALS, startLocalS3, type LocalS3 } from '../../deploy/local-s3.js';
import { LocalObjectStore } from '../../src/objects/local-object-store.js';
import { S3ObjectStore } from '../../src/objects/s3-object-store.js';
import { freePort, startServer, until } from '../helpers/processes.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const tmp = tempDirs('sdg-objcheck-');

describe('S3 bucket check', () => {
  let s3: LocalS3;
  const opened: S3ObjectStore[] = [];
  const store = (o: { bucket?: string; endpoint?: string; secret?: string }) => {
    const s = new S3ObjectStore({
      bucket: o.bucket ?? s3.bucket,
      endpoint: o.endpoint ?? s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      publicEndpoint: undefined,
      credentials: { accessKeyId: LOCAL_S3_CREDENTIALS.accessKeyId, secretAccessKey: o.secret ?? LOCAL_S3_CREDENTIALS.secretAccessKey },
    });
    opened.push(s);
    return s;
  };
  let s3Dir: string;
  before(async () => {
    s3Dir = tmp();
    s3 = await startLocalS3({ dir: s3Dir });
  });
  after(async () => {
    for (const s of opened) s.close();
    await s3.close();
  });

  test('passes on the bucket as configured, and leaves nothing in it', async () => {
    const s = store({});
    await s.check();
    // What s3rver keeps on disk: an object stored (and kept) shows, the check's probe does not.
    await s.put('exports/kept.jsonl.gz', { path: join(import.meta.dirname, 'store-check.test.ts') });
    const files = readdirSync(s3Dir, { recursive: true }).map(String);
    assert.ok(files.some((f) => f.includes('kept.jsonl.gz')), files.join(', '));
    assert.ok(!files.some((f) => f.includes('sdg-check')), files.join(', '));
  });

  test('names the bucket and the fix: no such bucket, refused credentials, nothing answering', async () => {
    await assert.rejects(store({ bucket: 'no-such-bucket' }).check(), (err: Error) => {
      assert.match(err.message, /^S3 bucket no-such-bucket at http:\/\/127\.0\.0\.1:\d+: no such bucket \(create it, or fix S3_BUCKET\)$/);
      return true;
    });
    await assert.rejects(store({ secret: 'not-the-secret' }).check(), /: access refused \(SignatureDoesNotMatch, HTTP 403\): check the credentials/);
    const nothing = `http://127.0.0.1:${await freePort()}`;
    await assert.rejects(store({ endpoint: nothing }).check(), (err: Error) => {
      assert.equal(err.message, `S3 bucket ${s3.bucket} at ${nothing}: does not answer (ECONNREFUSED): start it, or fix S3_ENDPOINT`);
      return true;
    });
  });

  test('names the region to fix when the bucket lives in another one (HTTP 301, as AWS answers)', async () => {
    // What S3 answers a request signed for the wrong region: no local S3 server has regions, so a
    // server of a few lines answers as AWS does (PermanentRedirect, x-amz-bucket-region).
    const aws = createServer((req, res) => {
      req.resume();
      res.writeHead(301, { 'content-type': 'application/xml', 'x-amz-bucket-region': 'eu-west-3' });
      res.end('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to access must be addressed using the specified endpoint.</Message><Endpoint>exports.s3.eu-west-3.amazonaws.com</Endpoint><Bucket>exports</Bucket></Error>');
    });
    await new Promise<void>((r) => aws.listen(0, '127.0.0.1', r));
    try {
      const endpoint = `http://127.0.0.1:${(aws.address() as AddressInfo).port}`;
      await assert.rejects(store({ bucket: 'exports', endpoint }).check(), (err: Error) => {
        assert.equal(err.message, `S3 bucket exports at ${endpoint}: the bucket is in another region, eu-west-3 (fix S3_REGION)`);
        return true;
      });
    } finally {
      aws.close();
    }
  });
});

describe('export directory check', () => {
  let dir: string;
  before(() => {
    dir = tmp();
  });

  test('makes the folder if needed and leaves nothing behind', async () => {
    const root = join(dir, 'exports');
    await new LocalObjectStore(root).check();
    assert.deepEqual(readdirSync(join(root, '.partial')), []);
  });

  test('says why it cannot write', async () => {
    // A path under a file: no folder can be made there, even by root.
    await assert.rejects(new LocalObjectStore('/dev/null/exports').check(), (err: Error) => {
      assert.equal(err.message, 'export directory /dev/null/exports (EXPORTS_DIR): cannot write (ENOTDIR)');
      return true;
    });
  });
});

test('a worker started with a bucket it cannot use says so once, at start, and the API serves', async () => {
  const data = tmp();
  const env = {
    DATA_DIR: data,
    S3_BUCKET: 'exports',
    S3_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
    S3_FORCE_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: 'a',
    AWS_SECRET_ACCESS_KEY: 'b',
    LOG_LEVEL: 'info',
  };
  const server = await startServer(env);
  try {
    await until('the warning', 10_000, () => /exports will fail until it is fixed/.test(server.output()));
    const line = server.output().split('\n').find((l) => l.includes('exports will fail'))!;
    const entry = JSON.parse(line) as { level: number; msg: string };
    assert.equal(entry.level, 40, 'warn');
    assert.match(entry.msg, /^S3 bucket exports at http:\/\/127\.0\.0\.1:\d+: does not answer \(ECONNREFUSED\): start it, or fix S3_ENDPOINT; exports will fail until it is fixed$/);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    assert.equal(server.output().match(/exports will fail/g)!.length, 1);
  } finally {
    await server.stop();
  }
});
