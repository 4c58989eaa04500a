// The data directory, the SQLite files (with WAL and SHM) and export files are private to the
// server's user, even under a permissive umask.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import { sql } from 'kysely';
import { openStore } from '../../src/db/connect.js';
import { LocalObjectStore } from '../../src/objects/local-object-store.js';

const root = mkdtempSync(join(tmpdir(), 'sdg-modes-'));
const oldMask = process.umask(0o022);
after(() => {
  process.umask(oldMask);
  rmSync(root, { recursive: true, force: true });
});
const mode = (p: string) => statSync(p).mode & 0o777;

test('the data directory is 0700 and the SQLite files 0600', async () => {
  const dataDir = join(root, 'data');
  const store = openStore({ dataDir });
  try {
    await sql`create table t (x integer)`.execute(store.db);
    await sql`insert into t values (1)`.execute(store.db);
    assert.equal(mode(dataDir), 0o700);
    for (const f of ['gateway.sqlite', 'gateway.sqlite-wal', 'gateway.sqlite-shm']) {
      const p = join(dataDir, f);
      assert.ok(existsSync(p), f);
      assert.equal(mode(p), 0o600, f);
    }
  } finally {
    await store.close();
  }
});

test('an existing, open data directory is made private at start', async () => {
  const dataDir = join(root, 'old');
  const first = openStore({ dataDir });
  await first.close();
  const { chmodSync } = await import('node:fs');
  chmodSync(dataDir, 0o755);
  chmodSync(join(dataDir, 'gateway.sqlite'), 0o644);
  const again = openStore({ dataDir });
  await again.close();
  assert.equal(mode(dataDir), 0o700);
  assert.equal(mode(join(dataDir, 'gateway.sqlite')), 0o600);
});

test('export files and their folders are private', async () => {
  const objects = new LocalObjectStore(join(root, 'exports'));
  await objects.put('exports/1/export-1.jsonl.gz', Readable.from([Buffer.from('data')]));
  assert.equal(mode(join(root, 'exports', 'exports', '1', 'export-1.jsonl.gz')), 0o600);
  assert.equal(mode(join(root, 'exports', 'exports', '1')), 0o700);
});
