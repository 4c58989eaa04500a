// Object storage and retention settings: S3_BUCKET switches the store (the AWS SDK is loaded only
// then), bad values stop the start naming the variable, retention defaults to 7 days.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { ConfigError } from '../../src/config/env.js';
import { buildObjectStore } from '../../src/objects/build-object-store.js';
import { LocalObjectStore } from '../../src/objects/local-object-store.js';
import { S3ObjectStore } from '../../src/objects/s3-object-store.js';
import { repoRoot } from '../helpers/processes.js';

const base = { DATA_DIR: '/tmp/sdg-config-test', LOG_LEVEL: 'silent' };

test('without S3_BUCKET exports stay in the local directory, kept 7 days', async () => {
  const c = loadConfig(base);
  assert.equal(c.exports.s3, undefined);
  assert.equal(c.exports.retentionDays, 7);
  assert.ok((await buildObjectStore(c)) instanceof LocalObjectStore);
});

test('S3_BUCKET switches to S3, with the region, endpoint and path style given', async () => {
  const c = loadConfig({ ...base, S3_BUCKET: 'sdg-exports', S3_ENDPOINT: 'http://minio:9000', S3_FORCE_PATH_STYLE: 'true', S3_PUBLIC_ENDPOINT: 'https://files.example.test', EXPORT_RETENTION_DAYS: '0.5' });
  assert.deepEqual(c.exports.s3, { bucket: 'sdg-exports', endpoint: 'http://minio:9000', region: 'us-east-1', forcePathStyle: true, publicEndpoint: 'https://files.example.test' });
  assert.equal(c.exports.retentionDays, 0.5);
  const store = await buildObjectStore(c);
  assert.ok(store instanceof S3ObjectStore);
  store.close?.();
  assert.equal(loadConfig({ ...base, S3_BUCKET: 'b-1', S3_REGION: 'eu-west-3' }).exports.s3?.region, 'eu-west-3');
});

test('bad values stop the start, naming the variable', () => {
  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ S3_BUCKET: 'Not_A_Bucket' }, /S3_BUCKET/],
    [{ S3_BUCKET: 'ok-bucket', S3_ENDPOINT: 'minio:9000' }, /S3_ENDPOINT/],
    [{ S3_BUCKET: 'ok-bucket', S3_ENDPOINT: 'ftp://minio' }, /S3_ENDPOINT/],
    [{ S3_BUCKET: 'ok-bucket', S3_FORCE_PATH_STYLE: 'maybe' }, /S3_FORCE_PATH_STYLE/],
    [{ S3_BUCKET: 'ok-bucket', S3_PUBLIC_ENDPOINT: 'nope' }, /S3_PUBLIC_ENDPOINT/],
    [{ EXPORT_RETENTION_DAYS: '-1' }, /EXPORT_RETENTION_DAYS/],
    [{ EXPORT_RETENTION_DAYS: 'week' }, /EXPORT_RETENTION_DAYS/],
  ];
  for (const [env, msg] of bad) assert.throws(() => loadConfig({ ...base, ...env }), (e: unknown) => e instanceof ConfigError && msg.test(e.message), JSON.stringify(env));
});

test('the embedded default does not load the AWS SDK', () => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'test/helpers/loaded-packages.ts'], { cwd: repoRoot }).toString();
  const loaded = new Set(out.trim().split('\n'));
  assert.ok(loaded.has('fastify'));
  for (const p of ['@aws-sdk/client-s3', '@aws-sdk/lib-storage', '@aws-sdk/s3-request-presigner']) assert.ok(!loaded.has(p), `${p} was loaded`);
});
