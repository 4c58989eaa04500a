// The busy-writer settings of SQLite (src/db/busy-writer.ts): many writes move checkpoints to a
// worker; only a bulk ingest of tweets grows the page cache (a busy ledger would just fill it).
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { BusyWriter } from '../../src/db/busy-writer.js';
import { GroupCommit } from '../../src/db/group-commit.js';
import { createAccount } from '../../src/accounts/accounts-repo.js';
import { tweetStoreFor } from '../../src/social/tweet-store.js';
import { createTestStore } from '../helpers/backends.js';
import { demoTweets } from '../../bench/fixtures.js';

describe('SQLite busy writer', () => {
  test('ledger writes start the checkpoint worker but keep the default cache; a tweet ingest grows it', async () => {
    const ts = await createTestStore('sqlite');
    try {
      const { migrateToLatest } = await import('../../src/db/migrate.js');
      await migrateToLatest(ts.store);
      const sqlite = ts.store.sqlite!;
      const defaultCache = sqlite.pragma('cache_size', { simple: true });
      const { accountId } = await createAccount(ts.store.db, { name: 'b', planId: 'free' });
      const insert = sqlite.prepare("insert into ledger_entries (account_id, kind, amount, balance_after, request_id, key_id, endpoint, note, created_at) values (?, 'charge', -1, 0, ?, null, 'e', null, '2025-01-01T00:00:00.000Z')");
      sqlite.transaction(() => {
        for (let i = 0; i < 5_000; i++) insert.run(accountId, `r${i}`);
      })();
      await sleep(500);
      // The writer's own checkpoint waits for 1 GiB of WAL whatever the page size (counted in frames
      // chosen for 4 KiB pages, a 16 KiB store's WAL grew four times as large).
      assert.equal(sqlite.pragma('page_size', { simple: true }), 8_192);
      assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 131_072, 'the checkpoint worker took over; the backstop is 1 GiB');
      assert.equal(sqlite.pragma('cache_size', { simple: true }), defaultCache, 'ledger writes leave the cache as it was');

      const tweets = await demoTweets(3_000);
      await tweetStoreFor(ts.store).write(tweets, new Date().toISOString());
      await sleep(500);
      assert.equal(sqlite.pragma('cache_size', { simple: true }), -64 * 1024, 'a bulk ingest grows the cache to 64 MB');
    } finally {
      await ts.dispose();
    }
  });

  test('under grouped writes that never pause, short holds let the WAL start over without the backstop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdg-busy-'));
    const path = join(dir, 'store.sqlite');
    const sqlite = new SQLite(path);
    sqlite.pragma('page_size = 16384');
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.exec('create table t (id integer primary key, v blob not null)');
    const group = new GroupCommit(sqlite);
    let holds = 0;
    const busy = new BusyWriter(sqlite, path, {
      holdWrites: (scope) => {
        if (scope === 'bulk') holds++;
        return group.hold(scope);
      },
      resetBytes: 4 * 1024 * 1024,
    });
    // The WAL header's checkpoint sequence number (file format, offset 12) counts the WAL's resets.
    const resets = (): number => {
      const fd = openSync(`${path}-wal`, 'r');
      try {
        const b = Buffer.alloc(4);
        readSync(fd, b, 0, 4, 12);
        return b.readUInt32BE(0);
      } finally {
        closeSync(fd);
      }
    };
    const insert = sqlite.prepare('insert into t (v) values (?)');
    const blob = Buffer.alloc(400, 7);
    let writing = true;
    let written = 0;
    // Four writers, each with a job always queued: some grouped write is in every turn. Two write in
    // bulk (a crawl's pages), two not (the calls' charges), which the long copy lets go on.
    const writers = Array.from({ length: 4 }, async (_, w) => {
      while (writing) {
        await group.run(
          () => {
            for (let i = 0; i < 10; i++) insert.run(blob);
            written += 10;
          },
          { bulk: w % 2 === 0 },
        );
      }
    });
    try {
      for (let i = 0; i < 200 && sqlite.pragma('wal_autocheckpoint', { simple: true }) !== 65_536; i++) await sleep(50);
      assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 65_536, 'the checkpoint worker started (1 GiB of 16 KiB pages)');
      // No backstop: a reset from now on comes from a hold (without them, none in this test: checked).
      sqlite.pragma('wal_autocheckpoint = 0');
      const before = resets();
      for (let i = 0; i < 300 && resets() - before < 3; i++) await sleep(50);
      assert.ok(resets() - before >= 3, `the WAL started over ${resets() - before} times in 15 s (${holds} holds)`);
      // A hold may start the WAL over twice: during its long copy, when the writes it lets go find
      // every frame copied, and after its last copy.
      assert.ok(holds >= 2, `${holds} holds for ${resets() - before} resets`);
    } finally {
      writing = false;
      await Promise.all(writers);
      await busy.close();
    }
    // Jobs that waited out a hold all ran.
    assert.equal(sqlite.prepare('select count(*) from t').pluck().get(), written);
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // What ends a hold when the worker does not (white-box: the worker's messages cannot be made to
  // stall from outside, so the test starts the hold the way a 'hold' message would).
  interface Internals {
    startHold(): boolean;
    worker: import('node:worker_threads').Worker | undefined;
  }
  /** A WAL store with its group commit and a busy writer holding at most `holdMaxMs`; removed after `fn`. */
  const withHeldStore = async (holdMaxMs: number, fn: (s: { sqlite: SQLite.Database; group: GroupCommit; internals: Internals }) => Promise<void>) => {
    const dir = mkdtempSync(join(tmpdir(), 'sdg-busy-'));
    const path = join(dir, 'store.sqlite');
    const sqlite = new SQLite(path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.exec('create table t (id integer primary key, v text not null)');
    const group = new GroupCommit(sqlite);
    const busy = new BusyWriter(sqlite, path, { holdWrites: (scope) => group.hold(scope), holdMaxMs });
    try {
      await fn({ sqlite, group, internals: busy as unknown as Internals });
    } finally {
      await busy.close();
      sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };
  /** Queues a bulk job that runs `write`; `released()` waits for it to have run (failing after 5 s). */
  const bulkJob = (group: GroupCommit, write: () => void) => {
    let ran = false;
    const job = group.run(
      () => {
        write();
        ran = true;
      },
      { bulk: true },
    );
    return {
      ran: () => ran,
      released: () => Promise.race([job, sleep(5_000).then(() => assert.fail('the hold was never released'))]),
    };
  };

  test('a hold the worker never ends lets the grouped writes go when its timer runs out', async () => {
    await withHeldStore(400, async ({ sqlite, group, internals }) => {
      assert.equal(internals.startHold(), true);
      assert.equal(internals.startHold(), false, 'one hold at a time');
      const job = bulkJob(group, () => sqlite.prepare("insert into t (v) values ('x')").run());
      // The hold starts with the bulk writes only: the others go on.
      await group.run(() => sqlite.prepare("insert into t (v) values ('charge')").run());
      await sleep(100);
      assert.equal(job.ran(), false, 'the bulk write waits while the hold lasts');
      await job.released();
      assert.equal(job.ran(), true);
      assert.equal(sqlite.prepare('select count(*) from t').pluck().get(), 2);
    });
  });

  test('a worker that exits during a hold lets the grouped writes go', async () => {
    // A timer far beyond the test's own timeout: only the worker's exit can end this hold.
    await withHeldStore(10 * 60_000, async ({ sqlite, group, internals }) => {
      const insert = sqlite.prepare("insert into t (v) values ('x')");
      sqlite.transaction(() => {
        for (let i = 0; i < 5_000; i++) insert.run();
      })();
      for (let i = 0; i < 100 && !internals.worker; i++) await sleep(50);
      assert.ok(internals.worker, 'the checkpoint worker started');
      assert.equal(internals.startHold(), true);
      const job = bulkJob(group, () => insert.run());
      await sleep(100);
      assert.equal(job.ran(), false, 'the bulk write waits while the hold lasts');
      await internals.worker.terminate();
      await job.released();
      assert.equal(job.ran(), true);
      assert.equal(sqlite.prepare('select count(*) from t').pluck().get(), 5_001);
    });
  });
});
