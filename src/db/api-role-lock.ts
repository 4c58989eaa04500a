// One API process per embedded store. The embedded meter holds each call's credits in the process
// (sqlite-meter-store.ts) and the rate limits count in memory, so a second `sdg serve` on the same
// DATA_DIR would do a costed call's work and then answer 402 unpaid, and double every rate limit.
// Workers, the scheduler and the `sdg` commands share the store freely; only the API role locks.
//
// The lock is SQLite's own on a small file beside the store: a connection in EXCLUSIVE locking mode
// keeps the write lock it takes until it closes, and the kernel drops it when the process dies, even
// by kill -9, so a crashed server never leaves a stale lock behind (a pid file would).
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';

export const API_LOCK_FILE = 'api.lock';

export class ApiRoleLockedError extends Error {
  constructor(readonly path: string) {
    super(
      `Another \`sdg serve\` with the API role is using the embedded store in this DATA_DIR (it holds ${path}). ` +
        'One API process serves an embedded store: stop the other one, give this one another DATA_DIR, or set DATABASE_URL and REDIS_URL to run several.',
    );
    this.name = 'ApiRoleLockedError';
  }
}

export interface ApiRoleLock {
  release(): void;
}

/** Takes the API role's lock on the embedded store in `dataDir`, or throws ApiRoleLockedError. */
export function lockApiRole(dataDir: string): ApiRoleLock {
  // Made as openSqlite makes the store: private to the server's user.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, API_LOCK_FILE);
  closeSync(openSync(path, 'a', 0o600));
  chmodSync(path, 0o600);
  const db = new SQLite(path, { timeout: 0 });
  try {
    db.pragma('journal_mode = DELETE');
    db.pragma('locking_mode = EXCLUSIVE');
    // A write, so that the connection takes the exclusive lock and, in this mode, keeps it.
    db.exec('create table if not exists holder (id integer primary key, pid integer not null, since text not null)');
    db.prepare('insert or replace into holder (id, pid, since) values (1, ?, ?)').run(process.pid, new Date().toISOString());
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) throw new ApiRoleLockedError(path);
    throw err;
  }
  return { release: () => db.close() };
}
