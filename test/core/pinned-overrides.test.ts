// package.json's `overrides` replace versions that dependants asked for (README, "Why these
// dependencies"): each replacement must still offer what its dependants call, and stay past the
// advisory it is there for.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import Fastify from 'fastify';
import { repoRoot } from '../helpers/processes.js';

const require = createRequire(import.meta.url);
const installed = (name: string): string => (JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
/** Whether dotted version `v` is `min` or later (numeric parts, left to right). */
const atLeast = (v: string, min: string): boolean => {
  const a = v.split('.').map(Number);
  const b = min.split('.').map(Number);
  for (let i = 0; i < b.length; i++) if ((a[i] ?? 0) !== b[i]) return (a[i] ?? 0) > b[i]!;
  return true;
};
const overrides = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { overrides: Record<string, string> }).overrides;
/** Every copy of package `name` the lockfile installs: [path, version]. */
const lockedCopies = (name: string): Array<[string, string]> => {
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  return Object.entries(lock.packages)
    .filter(([path]) => path === `node_modules/${name}` || path.endsWith(`/node_modules/${name}`))
    .map(([path, { version }]) => [path, version!]);
};
/** The version of `name` that package `from` resolves at run time. */
const resolvedFrom = (from: string, name: string): string =>
  (JSON.parse(readFileSync(require.resolve(`${name}/package.json`, { paths: [join(repoRoot, 'node_modules', from)] }), 'utf8')) as { version: string }).version;

test('cookie: the override keeps the API light-my-request calls (inject with cookies)', async () => {
  assert.equal(installed('cookie'), overrides.cookie);
  // light-my-request asks for cookie ^2 (Node 22 only) and calls its stringifySetCookie, which
  // cookie 1.0.2 lacked: an inject with cookies threw "stringifySetCookie is not a function".
  const app = Fastify();
  app.get('/c', async (req) => ({ cookie: req.headers.cookie }));
  const res = await app.inject({ method: 'GET', url: '/c', cookies: { a: 'b', c: 'd e' } });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { cookie: 'a=b; c=d%20e' });
  await app.close();
});

test('ws: every copy installed is past GHSA-96hv-2xvq-fx4p (fixed in 8.21.0)', () => {
  const copies = lockedCopies('ws');
  assert.ok(copies.length > 0, 'viem depends on ws');
  for (const [path, version] of copies) assert.ok(atLeast(version, '8.21.0'), `${path} is ws ${version}`);
  // What viem resolves at run time is the copy the lockfile names.
  assert.equal(resolvedFrom('viem', 'ws'), overrides.ws);
});

test('lodash (development tree only): every copy is past GHSA-xxjr-mmjv-4gpg (fixed in 4.17.23)', () => {
  const copies = lockedCopies('lodash');
  assert.ok(copies.length > 0, 'Prism and s3rver depend on lodash');
  for (const [path, version] of copies) assert.ok(atLeast(version, '4.17.23'), `${path} is lodash ${version}`);
  // postman-collection pinned 4.17.21 in a copy of its own; it now resolves the overridden one.
  assert.equal(resolvedFrom('postman-collection', 'lodash'), overrides.lodash);
});

test('better-sqlite3 bundles SQLite 3.53.2 or later (past the FTS5 overflow CVE-2026-11824)', async () => {
  const { default: SQLite } = await import('better-sqlite3');
  const db = new SQLite(':memory:');
  const { v } = db.prepare('select sqlite_version() as v').get() as { v: string };
  db.close();
  assert.ok(atLeast(v, '3.53.2'), `SQLite ${v}`);
});
