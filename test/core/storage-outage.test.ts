// The storage outage report: one warning with the cause at the first failure, the failures
// counted, one line when the probe gets an answer again; a new outage is reported anew.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { openStore } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { StorageOutage } from '../../src/db/storage-outage.js';
import { until } from '../helpers/processes.js';

test('an outage is logged once with its cause, and its end once with the failures it caused', async () => {
  const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) => lines.push({ level, obj, msg });
  const log = { warn: at('warn'), info: at('info') };
  let reachable = false;
  let probes = 0;
  const outage = new StorageOutage(async () => {
    probes++;
    if (!reachable) throw new Error('connect ECONNREFUSED');
  }, 5);
  try {
    assert.equal(outage.down, false);
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (let i = 0; i < 3; i++) outage.failed(cause, log);
    assert.equal(outage.down, true);
    assert.equal(outage.cause, 'ECONNREFUSED');
    assert.deepEqual(lines.map((l) => l.level), ['warn']);
    assert.deepEqual(lines[0]!.obj, { cause: { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' } });

    await until('probed while down', 2_000, () => probes >= 3);
    assert.equal(lines.length, 1, 'nothing more while it is still down');
    outage.failed(cause, log);
    reachable = true;
    await until('the end logged', 2_000, () => lines.length === 2);
    assert.equal(lines[1]!.level, 'info');
    assert.equal(lines[1]!.obj.failures, 4);
    assert.equal(outage.down, false);

    // Probing stops with the outage; the next one is reported anew.
    const after = probes;
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(probes, after);
    reachable = false;
    outage.failed(new Error('Connection terminated unexpectedly'), log);
    assert.equal(lines.length, 3);
    assert.equal(lines[2]!.level, 'warn');
    // pg's messages carry no code: /readyz gives them one of its own.
    assert.equal(outage.cause, 'CONNECTION_TERMINATED');
  } finally {
    outage.close();
  }
});

test('on SQLite, the end is logged when the write lock can be had again, not while another process holds it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdg-outage-'));
  const store = openStore({ dataDir: dir });
  // Another process's connection, as the `sdg` command line's or a backup's would be.
  const other = new SQLite(join(dir, 'gateway.sqlite'));
  try {
    await migrateToLatest(store);
    const lines: string[] = [];
    const log = { warn: (_o: object, msg: string) => lines.push(`warn ${msg}`), info: (_o: object, msg: string) => lines.push(`info ${msg}`) };
    other.exec('begin immediate');
    // A write of ours is refused while the lock is held (busy_timeout lowered to keep the test short).
    store.sqlite!.pragma('busy_timeout = 50');
    const err = (() => {
      try {
        store.sqlite!.prepare("insert into settings (key, value) values ('probe-test', 'x')").run();
      } catch (e) {
        return e as { code?: string };
      }
    })();
    assert.equal(err?.code, 'SQLITE_BUSY');
    store.outage!.failed(err, log);
    // Two probes while the lock is held: a `select 1` would have answered.
    await new Promise((r) => setTimeout(r, 2_300));
    assert.deepEqual(lines.map((l) => l.split(' ')[0]), ['warn']);
    assert.equal(store.outage!.down, true);
    other.exec('rollback');
    await until('the end logged', 3_000, () => lines.length === 2);
    assert.equal(lines[1], 'info storage answers again');
  } finally {
    other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
