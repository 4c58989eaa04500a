// One API process per embedded store: a second `sdg serve` on the same DATA_DIR is refused with a
// line saying why, workers and the scheduler still share the store, and a server killed by -9 leaves
// no lock behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiRoleLockedError, lockApiRole } from '../../src/db/api-role-lock.js';
import { freePort, repoRoot, runSdg, startServer, until } from '../helpers/processes.js';

test('the lock is taken once per DATA_DIR and can be taken again once released', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sdg-apilock-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const first = lockApiRole(dir);
  assert.throws(() => lockApiRole(dir), ApiRoleLockedError);
  // Another directory is another store.
  const other = lockApiRole(join(dir, 'other'));
  other.release();
  first.release();
  lockApiRole(dir).release();
});

test('a second API server on one embedded store is refused; a worker beside it is not; kill -9 frees the lock', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sdg-apilock-'));
  const env = { DATA_DIR: dir };
  const first = await startServer(env);
  t.after(async () => {
    await first.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const port = await freePort();
  const second = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
    cwd: repoRoot,
    env: { ...process.env, ...env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  second.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((res) => second.on('close', res));
  assert.notEqual(code, 0);
  assert.match(stderr, /Another `sdg serve` with the API role is using the embedded store/);
  assert.match(stderr, /DATABASE_URL and REDIS_URL/);
  // One line, no stack trace.
  assert.equal(stderr.trim().split('\n').length, 1, stderr);
  // It never listened, and the first one still serves.
  await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`));
  assert.equal((await fetch(`${first.url}/healthz`)).status, 200);

  // The background roles share the store with the API process.
  const worker = await startServer({ ...env, ROLES: 'worker,scheduler' });
  assert.equal(await worker.stop(), 0);
  // So do the operator's commands.
  const listed = await runSdg(['accounts', 'list', '--json'], env);
  assert.equal(listed.code, 0, listed.stderr);

  // A server that dies without a word holds nothing: the next one starts.
  await first.stop('SIGKILL');
  const next = await startServer(env);
  t.after(() => next.stop('SIGKILL'));
  await until('the new server to answer', 5_000, async () => (await fetch(`${next.url}/healthz`)).ok);
});
