// `sdg backup` copies the embedded store while the server runs and charges calls: the copy is whole
// (SQLite's integrity check), consistent (every account's ledger sums to its balance, as of one
// moment between charges) and private (0600). `sdg restore` refuses while the server runs, then
// puts the copy back, keeping the replaced store aside, and the server serves the copy's accounts.
import assert from 'node:assert/strict';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { runSdg, startServer } from '../helpers/processes.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const tmp = tempDirs('sdg-backup-');

interface Books {
  accounts: number;
  unbalanced: number;
  entries: number;
  balance: number;
}

function books(file: string, accountId: string): Books {
  const db = new SQLite(file, { readonly: true });
  try {
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    const q = (s: string, ...a: unknown[]) => db.prepare(s).pluck().get(...a) as number;
    return {
      accounts: q('select count(*) from accounts'),
      unbalanced: q('select count(*) from accounts a where a.balance <> (select coalesce(sum(amount), 0) from ledger_entries l where l.account_id = a.id)'),
      entries: q('select count(*) from ledger_entries where account_id = ?', accountId),
      balance: q('select balance from accounts where id = ?', accountId),
    };
  } finally {
    db.close();
  }
}

test('sdg backup while charged calls run: a whole, consistent, private copy; sdg restore puts it back once the server is stopped', { timeout: 120_000 }, async () => {
  const dataDir = tmp();
  const server = await startServer({ DATA_DIR: dataDir, ROLES: 'api' });
  try {
    const c = await runSdg(['accounts', 'create', '--name', 'Ada', '--credits', '100000000', '--rate-limit-per-minute', '1000000', '--json'], { DATA_DIR: dataDir });
    assert.equal(c.code, 0, c.stderr);
    const { accountId, apiKey } = JSON.parse(c.stdout) as { accountId: string; apiKey: string };
    const { tweetIds } = JSON.parse((await runSdg(['demo', 'sample', '--json'], {})).stdout) as { tweetIds: string[] };

    // Charged calls, 10 at a time, until the backup is done.
    let stop = false;
    let served = 0;
    const statuses = new Set<number>();
    const load = Promise.all(
      Array.from({ length: 10 }, async (_, w) => {
        for (let i = 0; !stop; i++) {
          const r = await fetch(`${server.url}/social/v1/tweets/${tweetIds[(i + w) % tweetIds.length]}`, { headers: { 'x-api-key': apiKey } });
          statuses.add(r.status);
          await r.arrayBuffer();
          served++;
        }
      }),
    );
    const backupDir = tmp();
    const file = join(backupDir, 'gateway-backup.sqlite');
    await new Promise((r) => setTimeout(r, 500));
    const servedBefore = served;
    const b = await runSdg(['backup', file, '--json'], { DATA_DIR: dataDir });
    const servedDuring = served - servedBefore;
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await load;
    assert.deepEqual([...statuses], [200]);
    assert.equal(b.code, 0, b.stderr);
    const out = JSON.parse(b.stdout) as { file: string; bytes: number; pages: number };
    assert.equal(out.file, file);
    assert.equal(out.bytes, statSync(file).size);
    assert.ok(out.pages > 0);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(backupDir), ['gateway-backup.sqlite'], 'no partial file left');
    assert.ok(servedDuring > 0, 'calls were charged while the command ran');

    const copy = books(file, accountId);
    const live = books(join(dataDir, 'gateway.sqlite'), accountId);
    assert.equal(copy.unbalanced, 0, 'every ledger in the copy sums to its balance');
    assert.equal(live.unbalanced, 0);
    assert.ok(copy.entries > 1, `charges before the backup are in it (${copy.entries} entries)`);
    assert.ok(live.entries > copy.entries, `charges after it are not (${copy.entries} of ${live.entries})`);

    // A second backup under the same name is refused and leaves the first as it was.
    const again = await runSdg(['backup', file], { DATA_DIR: dataDir });
    assert.equal(again.code, 2);
    assert.match(again.stderr, /already exists/);
    assert.equal(books(file, accountId).entries, copy.entries);

    // Restoring while the server runs is refused, and the store is left alone.
    const busy = await runSdg(['restore', file], { DATA_DIR: dataDir });
    assert.equal(busy.code, 2);
    assert.match(busy.stderr, /^sdg: The store at .* is in use: stop every process/);
    assert.equal(books(join(dataDir, 'gateway.sqlite'), accountId).entries, live.entries);
    assert.equal((await fetch(`${server.url}/api/v1/credits/balance`, { headers: { 'x-api-key': apiKey } })).status, 200);

    // Stopped, it is restored: the server started again has the balance of the backup, and the
    // store it replaced is kept aside, whole.
    assert.equal(await server.stop(), 0);
    const r = await runSdg(['restore', file, '--json'], { DATA_DIR: dataDir });
    assert.equal(r.code, 0, r.stderr);
    const restored = JSON.parse(r.stdout) as { restored: string; movedAside: string[] };
    assert.equal(restored.restored, join(dataDir, 'gateway.sqlite'));
    assert.equal(restored.movedAside.length, 1, 'the last connection to close removed the WAL');
    assert.match(restored.movedAside[0]!, /gateway\.sqlite\.before-restore-/);
    assert.deepEqual(books(restored.movedAside[0]!, accountId), live);
    assert.equal(statSync(restored.restored).mode & 0o777, 0o600);
    const restarted = await startServer({ DATA_DIR: dataDir, ROLES: 'api' });
    try {
      const bal = await fetch(`${restarted.url}/api/v1/credits/balance`, { headers: { 'x-api-key': apiKey } });
      assert.equal(bal.status, 200);
      assert.equal(((await bal.json()) as { data: { balance: number } }).data.balance, copy.balance);
    } finally {
      await restarted.stop();
    }
    // Onto a new machine: a DATA_DIR that does not exist yet.
    const fresh = join(tmp(), 'new-data-dir');
    const f = await runSdg(['restore', file, '--json'], { DATA_DIR: fresh });
    assert.equal(f.code, 0, f.stderr);
    assert.deepEqual((JSON.parse(f.stdout) as { movedAside: string[] }).movedAside, []);
    assert.equal(books(join(fresh, 'gateway.sqlite'), accountId).balance, copy.balance);
    // A refused restore and two restores left nothing beside the backup (its check made -wal and -shm files there).
    assert.deepEqual(readdirSync(backupDir), ['gateway-backup.sqlite']);
  } finally {
    await server.stop();
  }
});

test('sdg backup and restore refuse, in one line: no store, a missing or unwritable directory, not a database, Postgres', async () => {
  const none = await runSdg(['backup', join(tmp(), 'b.sqlite')], { DATA_DIR: tmp(), DATABASE_URL: '' });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /^sdg: No store at .*gateway\.sqlite: nothing to back up/);
  const dataDir = tmp();
  assert.equal((await runSdg(['migrate'], { DATA_DIR: dataDir, DATABASE_URL: '' })).code, 0);
  const noDir = await runSdg(['backup', '/no/such/dir/b.sqlite'], { DATA_DIR: dataDir, DATABASE_URL: '' });
  assert.equal(noDir.code, 2);
  assert.equal(noDir.stderr, 'sdg: Cannot write /no/such/dir/b.sqlite: its directory /no/such/dir does not exist.\n');
  // /proc takes no new files, even from root: the copy itself fails (as on a full disk), in one line.
  const refused = await runSdg(['backup', '/proc/b.sqlite'], { DATA_DIR: dataDir, DATABASE_URL: '' });
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /^sdg: (the backup to \/proc\/b\.sqlite failed and left nothing under that name|Cannot write \/proc\/b\.sqlite: its directory \/proc is not writable)/);
  assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
  const notDb = join(tmp(), 'notes.txt');
  writeFileSync(notDb, 'not a database\n');
  const bad = await runSdg(['restore', notDb], { DATA_DIR: dataDir, DATABASE_URL: '' });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^sdg: .*notes\.txt is not a readable database: file is not a database\.\n$/);
  // The backup's folder instead of its file: one line, not copyFile's EISDIR stack trace.
  const folder = await runSdg(['restore', tmp()], { DATA_DIR: dataDir, DATABASE_URL: '' });
  assert.equal(folder.code, 2);
  assert.match(folder.stderr, /^sdg: Cannot open \S+ as a database: it is not a file \(give the backup file itself\)\.\n$/);
  const pg = await runSdg(['backup', join(tmp(), 'b.sqlite')], { DATA_DIR: tmp(), DATABASE_URL: 'postgres://127.0.0.1:1/none' });
  assert.equal(pg.code, 2);
  assert.match(pg.stderr, /^sdg: sdg backup copies the embedded store; with DATABASE_URL, back up Postgres with pg_dump/);
});
