// Common start-up mistakes end in one line that names the variable and what to do, a non-zero exit
// code and no stack trace. Each case spawns the real command line.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { freePort, repoRoot } from '../helpers/processes.js';
import { tempDirs } from '../helpers/temp-dirs.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function sdg(args: string[], env: Record<string, string>, uid?: number): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(uid !== undefined ? { uid, gid: uid } : {}),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((res) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      res({ code, stdout, stderr });
    }),
  );
}

/** One line, naming `variable`, no stack trace, non-zero exit. */
function assertOneLine(r: Run, variable: string, pattern: RegExp): void {
  assert.notEqual(r.code, 0, 'exits non-zero');
  assert.notEqual(r.code, null);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line, got:\n${r.stderr}`);
  assert.ok(lines[0]!.startsWith(`sdg: ${variable}`), lines[0]);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
}

describe('start-up errors', () => {
  const tmp = tempDirs('sdg-start-');

  test('DATA_DIR is a file', async () => {
    const file = join(tmp(), 'not-a-dir');
    writeFileSync(file, 'x');
    assertOneLine(await sdg(['migrate'], { DATA_DIR: file }), 'DATA_DIR', /is a file, not a directory/);
  });

  test('DATA_DIR is not writable', { skip: process.getuid?.() !== 0 && 'needs root to run the command as another user' }, async () => {
    // A directory of root's, read-only to others, run as nobody: both as DATA_DIR and as its parent.
    const ro = tmp();
    chmodSync(ro, 0o555);
    for (const dataDir of [join(ro, 'inside'), ro]) assertOneLine(await sdg(['migrate'], { DATA_DIR: dataDir }, 65534), 'DATA_DIR', /not writable/);
  });

  test('Postgres does not answer', async () => {
    const port = await freePort();
    const r = await sdg(['migrate'], { DATABASE_URL: `postgres://someone:secretpw@127.0.0.1:${port}/gateway` });
    assertOneLine(r, 'DATABASE_URL', /does not answer/);
    assert.ok(!r.stderr.includes('secretpw'), 'the password is never printed');
  });

  test('DATABASE_URL asks for TLS that Postgres does not offer', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL not set' }, async () => {
    // This machine's Postgres has no TLS. (verify-full: `require` also makes pg print a notice of its own.)
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.searchParams.set('sslmode', 'verify-full');
    assertOneLine(await sdg(['migrate'], { DATABASE_URL: url.toString() }), 'DATABASE_URL', /asks for TLS \(sslmode\) but Postgres at .* does not offer it/);
  });

  test('the Postgres database does not exist', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL not set' }, async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = '/sdg_no_such_database';
    assertOneLine(await sdg(['migrate'], { DATABASE_URL: url.toString() }), 'DATABASE_URL', /does not exist.*sdg_no_such_database/);
  });

  test('the disk under DATA_DIR is full', { skip: process.getuid?.() !== 0 && 'needs root to mount a tmpfs' }, async () => {
    const mnt = tmp();
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=128k', 'tmpfs', mnt]);
    try {
      const fd = openSync(join(mnt, 'junk'), 'w');
      assert.throws(() => {
        for (;;) writeSync(fd, Buffer.alloc(4096));
      }, /ENOSPC/);
      closeSync(fd);
      const r = await sdg(['serve'], { DATA_DIR: join(mnt, 'data'), PORT: String(await freePort()), ROLES: 'api' });
      assertOneLine(r, 'DATA_DIR', /the disk is full/);
    } finally {
      execFileSync('umount', ['-l', mnt]);
    }
  });

  test('Postgres accepts no writes (a standby)', { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL not set' }, async () => {
    // The server's own role, read-only, as every session on a standby is.
    const role = `sdg_ro_${process.pid}`;
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`create role ${role} login`);
      await admin.query(`create schema ${role} authorization ${role}`);
      const url = new URL(process.env.TEST_DATABASE_URL!);
      url.username = role;
      url.searchParams.set('options', `-c search_path=${role}`);
      assert.equal((await sdg(['migrate'], { DATABASE_URL: url.toString() })).code, 0);
      await admin.query(`alter role ${role} set default_transaction_read_only = on`);
      const r = await sdg(['serve'], { DATABASE_URL: url.toString(), DATA_DIR: tmp(), PORT: String(await freePort()), ROLES: 'api' });
      assertOneLine(r, 'DATABASE_URL', /accepts no writes.*point DATABASE_URL at the primary/);
    } finally {
      await admin.query(`drop schema if exists ${role} cascade`);
      await admin.query(`drop role if exists ${role}`);
      await admin.end();
    }
  });

  test('the store was migrated by a newer release', async () => {
    const dataDir = tmp();
    assert.equal((await sdg(['migrate'], { DATA_DIR: dataDir })).code, 0);
    const db = new SQLite(join(dataDir, 'gateway.sqlite'));
    db.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('999-from-the-future', new Date().toISOString());
    db.close();
    const r = await sdg(['serve'], { DATA_DIR: dataDir, PORT: String(await freePort()), ROLES: 'api' });
    assertOneLine(r, 'DATA_DIR', /migrated by a newer release \(it has 999-from-the-future; this release ends at \d{3}-[a-z-]+\): .*sdg migrate --to \d{3}-/);
  });

  test('the port is in use', async () => {
    const port = await freePort();
    const blocker: Server = createServer();
    await new Promise<void>((res) => blocker.listen(port, '127.0.0.1', res));
    try {
      const r = await sdg(['serve'], { DATA_DIR: tmp(), HOST: '127.0.0.1', PORT: String(port), ROLES: 'api' });
      assertOneLine(r, `PORT ${port}`, /already in use/);
    } finally {
      blocker.close();
    }
  });

  test('HOST is a name that does not resolve (a typo)', async () => {
    const r = await sdg(['serve'], { DATA_DIR: tmp(), HOST: '127.0.0.l', PORT: String(await freePort()), ROLES: 'api' });
    assertOneLine(r, 'HOST 127.0.0.l', /does not resolve to an address \((ENOTFOUND|EAI_AGAIN|EAI_FAIL)\)/);
  });

  test("DATABASE_URL's options: a search_path of no schema that exists, and a parameter Postgres does not know", { skip: !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL not set' }, async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.search = '?options=-c%20search_path%3Dsdg_no_such_schema';
    assertOneLine(await sdg(['migrate'], { DATABASE_URL: url.toString() }), 'DATABASE_URL', /names a schema that does not exist/);
    url.search = '?options=-c%20search_pth%3Dx';
    assertOneLine(await sdg(['accounts', 'list'], { DATABASE_URL: url.toString() }), "DATABASE_URL's options", /a parameter Postgres does not know \(unrecognized configuration parameter "search_pth"\)/);
  });
});
