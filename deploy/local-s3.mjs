// A local S3-compatible server for tests and for the topology without Docker: s3rver (a development
// dependency) behind a small front that refuses unsigned requests. s3rver checks every signature it
// is given (header or presigned query, and a presigned URL's expiry) but serves a request carrying
// none as if it were signed; the front closes that gap, so a presigned URL stripped of its signature
// is refused as S3 and MinIO refuse it.
// Plain JavaScript run by plain node: under tsx's loader a dependency of s3rver's (koa →
// generator-function) resolves to its ES module build, which Node 20 cannot require.
//   node deploy/local-s3.mjs [--port N] [--host H] [--bucket NAME] [--dir PATH]
// prints one JSON line {"endpoint","bucket"} once it listens; SIGTERM stops it.
import { createServer } from 'node:http';
import { URL } from 'node:url';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' }, bucket: { type: 'string', default: 'exports' }, dir: { type: 'string' } } });
const ownDir = values.dir === undefined;
const dir = values.dir ?? mkdtempSync(join(tmpdir(), 'sdg-s3-'));
const S3rver = createRequire(import.meta.url)('@20minutes/s3rver');
const s3 = new S3rver({ directory: dir, silent: true, configureBuckets: [{ name: values.bucket }], vhostBuckets: false });
await s3.configureBuckets();
const handle = s3.callback();

function isSigned(req) {
  if (req.headers.authorization) return true;
  const q = new URL(req.url ?? '/', 'http://local').searchParams;
  return q.has('X-Amz-Signature') || q.has('Signature');
}

const server = createServer((req, res) => {
  if (!isSigned(req)) {
    res.writeHead(403, { 'content-type': 'application/xml' });
    res.end('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Anonymous access is not allowed; sign the request.</Message></Error>');
    return;
  }
  handle(req, res);
});
server.listen(Number(values.port), values.host, () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ endpoint: `http://${values.host}:${port}`, bucket: values.bucket })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => {
    if (ownDir) rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
});
