// `npm start` (package.json's start script, word for word): serves from the one Node process it
// starts, with the script's flags, building dist/ first only when a source changed.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot, runSdg, startServer } from '../helpers/processes.js';

const startWords = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
const stampOf = () => readFileSync(join(repoRoot, 'dist', '.build-stamp'), 'utf8');
const mainBuiltAt = () => statSync(join(repoRoot, 'dist', 'src', 'cli', 'main.js')).mtimeMs;

async function startAsNpmDoes(before?: (env: Record<string, string>) => Promise<void>) {
  assert.equal(startWords[0], 'node');
  const dataDir = mkdtempSync(join(tmpdir(), 'sdg-npm-start-'));
  await before?.({ DATA_DIR: dataDir });
  const server = await startServer({ DATA_DIR: dataDir }, 60_000, startWords.slice(1));
  return { server, dispose: () => rmSync(dataDir, { recursive: true, force: true }) };
}

test('a built tree: no rebuild, and the server is the process the start script runs, with its flags', async () => {
  execFileSync(process.execPath, [join(repoRoot, 'scripts', 'build.mjs')], { cwd: repoRoot });
  const stamp = stampOf();
  const builtAt = mainBuiltAt();
  let apiKey = '';
  let tweetId = '';
  const { server, dispose } = await startAsNpmDoes(async (env) => {
    const made = await runSdg(['accounts', 'create', '--name', 'npm-start', '--credits', '1000', '--json'], env);
    assert.equal(made.code, 0, made.stderr);
    apiKey = (JSON.parse(made.stdout) as { apiKey: string }).apiKey;
    tweetId = (JSON.parse((await runSdg(['demo', 'sample', '--json'], env)).stdout) as { tweetIds: string[] }).tweetIds[0]!;
  });
  try {
    const pid = server.child.pid!;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    for (const flag of startWords.slice(1, -1)) assert.ok(cmdline.includes(flag), `served with ${flag}`);
    const children = spawnSync('ps', ['-o', 'args=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout.trim();
    assert.equal(children, '', 'no second process serves');
    // The bundle serves what the sources serve: documents, static files, metrics, keyed and charged calls.
    for (const path of ['/openapi.json', '/docs/', '/dashboard/', '/metrics']) assert.equal((await fetch(`${server.url}${path}`)).status, 200, path);
    assert.equal((await fetch(`${server.url}/echo/v1/hello`)).status, 401);
    const echo = await fetch(`${server.url}/echo/v1/hello`, { headers: { 'x-api-key': apiKey } });
    assert.equal(echo.status, 200);
    const tweet = await fetch(`${server.url}/social/v1/tweets/${tweetId}`, { headers: { 'x-api-key': apiKey } });
    assert.equal(tweet.status, 200);
    assert.ok((await tweet.text()).includes(`"${tweetId}"`), 'the tweet asked for');
    assert.ok(Number(tweet.headers.get('x-credits-charged')) > 0, 'charged');
    const bad = await fetch(`${server.url}/api/v1/api-keys`, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: '{"name": 5}' });
    assert.equal(bad.status, 400, 'request validation (Ajv, compiled on first use) works in the bundle');
    assert.equal(stampOf(), stamp);
    assert.equal(mainBuiltAt(), builtAt, 'nothing rebuilt');
    assert.equal(await server.stop(), 0, 'SIGTERM: a clean exit');
  } finally {
    await server.stop('SIGKILL');
    dispose();
  }
});

test('the bundled command line loads an optional integration only when it is configured', () => {
  execFileSync(process.execPath, [join(repoRoot, 'scripts', 'build.mjs')], { cwd: repoRoot });
  const dir = join(repoRoot, 'dist', 'src', 'cli');
  const main = readFileSync(join(dir, 'main.js'), 'utf8');
  // Static imports of packages left outside the bundle (the pure-JavaScript ones are inside it), from
  // main.js and the chunks it imports statically (code shared with a lazy chunk is split out).
  const staticImports = new Set<string>();
  const read = new Set<string>();
  const follow = (file: string): void => {
    if (read.has(file)) return;
    read.add(file);
    for (const m of readFileSync(join(dir, file), 'utf8').matchAll(/^(?:import|export)\s[^;]*?from\s*"([^"]+)";/gms)) {
      if (m[1]!.startsWith('./')) follow(m[1]!.slice(2));
      else staticImports.add(m[1]!);
    }
  };
  follow('main.js');
  for (const pkg of ['better-sqlite3', 'pino']) assert.ok(staticImports.has(pkg), `${pkg} is loaded from node_modules`);
  for (const pkg of ['kysely', '@sinclair/typebox', 'fastify', 'ajv', 'prom-client']) {
    assert.ok(![...staticImports].some((s) => s.startsWith(pkg)), `${pkg} is bundled in`);
    assert.ok(!main.includes(`require("${pkg}")`), `${pkg} is not required from node_modules`);
  }
  assert.match(main, /\/\/ node_modules\/fastify\/fastify\.js\n/, 'Fastify\'s own code is in the bundle');
  // Swagger UI is loaded on the first request for /docs; node:cluster only with WORKERS > 1.
  for (const pkg of ['@aws-sdk/client-s3', 'ioredis', 'viem', '@atproto/api', 'pg', '@fastify/swagger-ui', 'node:cluster']) assert.ok(!staticImports.has(pkg), `${pkg} is not loaded at start`);
  assert.match(main, /import\("\.\/chunk-[A-Z0-9]+\.js"\)/, 'lazy modules are chunks of their own');
});

test('a changed source: the start script rebuilds dist/ before serving', async () => {
  const builtAt = mainBuiltAt();
  const stamp = stampOf();
  const src = join(repoRoot, 'src', 'cli', 'serve.ts');
  const later = new Date(Math.max(Date.now(), statSync(src).mtimeMs + 1_000));
  utimesSync(src, later, later);
  const { server, dispose } = await startAsNpmDoes();
  try {
    assert.notEqual(stampOf(), stamp);
    assert.ok(mainBuiltAt() > builtAt, 'dist/ rebuilt');
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
  } finally {
    await server.stop();
    dispose();
  }
});
