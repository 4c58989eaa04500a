// A write that fails because the disk is full (SQLITE_FULL, as SQLite's max_page_count makes it
// here) can end the whole transaction, not only its statement: SQLite rolls it back on its own.
// The group commit must then fail every job of the turn, and run none of them after it: a job run
// after that point ran outside any transaction, so its writes were committed at once though its
// promise was rejected with the turn (a charge kept for a call answered as failed).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { GroupCommit } from '../../src/db/group-commit.js';

for (const rerunnable of [false, true]) {
  test(`a full disk mid-turn (${rerunnable ? 'rerunnable' : 'savepointed'} jobs): a job is rejected exactly when its writes are not kept`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sdg-gc-full-'));
    const db = new SQLite(join(dir, 'db.sqlite'));
    try {
      db.pragma('journal_mode = WAL');
      db.exec('create table small (id integer primary key, v text); create table big (id integer primary key, v blob)');
      db.prepare('insert into small (v) values (?)').run('seed');
      db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true })) + 2}`);
      const group = new GroupCommit(db);
      const small = db.prepare('insert into small (v) values (?)');
      const big = db.prepare('insert into big (v) values (?)');
      const jobs = [
        group.run(() => small.run('before').changes, { rerunnable }),
        group.run(() => big.run(Buffer.alloc(1 << 20)).changes, { rerunnable }),
        group.run(() => small.run('after').changes, { rerunnable }),
      ];
      const outcomes = await Promise.allSettled(jobs);
      assert.equal(outcomes[1]!.status, 'rejected');
      assert.match(String((outcomes[1] as PromiseRejectedResult).reason?.code), /^SQLITE_FULL/);
      assert.equal(db.inTransaction, false);
      const kept = new Set(db.prepare('select v from small').pluck().all() as string[]);
      for (const [i, v] of [[0, 'before'], [2, 'after']] as const) {
        assert.equal(kept.has(v), outcomes[i]!.status === 'fulfilled', `job '${v}': ${outcomes[i]!.status}, its row ${kept.has(v) ? 'kept' : 'not kept'}`);
      }
      // The connection writes again once there is room.
      db.pragma('max_page_count = 1073741823');
      assert.equal(await group.run(() => small.run('later').changes), 1);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
