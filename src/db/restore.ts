// Puts a backup (sdg backup) in place of the embedded store. Only while no process has the store
// open: a connection in EXCLUSIVE locking mode cannot lock a WAL database that another connection
// holds, even an idle one, so a server still running is caught and nothing is touched. The store's
// files (the database, its WAL and shared memory) are moved aside together, not deleted: a WAL
// left beside the restored database would be applied to it, and the old store stays whole for
// the operator to keep or remove.
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { chmod, copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { fsyncPath } from './fsync-path.js';
import { SQLITE_FILE } from './connect.js';
import { unknownMigrations } from './migrate.js';
import { storeInUse } from './store-in-use.js';

export class RestoreRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreRefusedError';
  }
}

export interface RestoreResult {
  restored: string;
  /** Where the replaced store's files went (empty when DATA_DIR had none). */
  movedAside: string[];
}

const SIDE_FILES = ['', '-wal', '-shm'];

/**
 * Throws RestoreRefusedError unless `copy` (of the backup `file`) is a whole store of this release or
 * an older one. The copy is checked, not the backup: opening a WAL-mode file (every backup made before
 * 2026-12-06) creates -wal and -shm files beside it, which were left next to the operator's backup.
 */
function checkBackup(copy: string, file: string): void {
  let db: SQLite.Database;
  try {
    db = new SQLite(copy, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new RestoreRefusedError(`Cannot open ${file} as a database: ${(err as Error).message}.`);
  }
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new RestoreRefusedError(`${file} failed SQLite's quick_check: ${String(check)}.`);
    const tables = new Set(db.prepare("select name from sqlite_master where type = 'table'").pluck().all() as string[]);
    if (!tables.has('kysely_migration') || !tables.has('accounts')) throw new RestoreRefusedError(`${file} is not a backup of this gateway's store (no accounts or migrations).`);
    const unknown = unknownMigrations(db.prepare('select name from kysely_migration').pluck().all() as string[]);
    if (unknown.length) throw new RestoreRefusedError(`${file} was made by a newer release (it has ${unknown.join(', ')}): restore it with that release.`);
  } catch (err) {
    if (err instanceof RestoreRefusedError) throw err;
    throw new RestoreRefusedError(`${file} is not a readable database: ${(err as Error).message}.`);
  } finally {
    db.close();
  }
}

/** Throws RestoreRefusedError while any process has the store at `path` open. */
function assertNotInUse(path: string): void {
  if (storeInUse(path)) throw new RestoreRefusedError(`The store at ${path} is in use: stop every process that uses DATA_DIR (the server, workers, the scheduler) first.`);
}

export async function restoreSqlite(dataDir: string, file: string, now = new Date()): Promise<RestoreResult> {
  if (!existsSync(file)) throw new RestoreRefusedError(`Cannot open ${file} as a database: no such file.`);
  // A directory (the backup's folder given instead of its file) failed in copyFile with a stack trace.
  if (!statSync(file).isFile()) throw new RestoreRefusedError(`Cannot open ${file} as a database: it is not a file (give the backup file itself).`);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, SQLITE_FILE);
  assertNotInUse(path);
  const incoming = `${path}.restoring-${randomBytes(4).toString('hex')}`;
  try {
    await copyFile(file, incoming);
    await chmod(incoming, 0o600);
    checkBackup(incoming, file);
    fsyncPath(incoming);
    const stamp = now.toISOString().replace(/[:.]/g, '-');
    const movedAside: string[] = [];
    for (const side of SIDE_FILES) {
      if (!existsSync(path + side)) continue;
      const aside = `${path}.before-restore-${stamp}${side}`;
      await rename(path + side, aside);
      movedAside.push(aside);
    }
    await rename(incoming, path);
    fsyncPath(dataDir);
    return { restored: path, movedAside };
  } finally {
    await Promise.all(SIDE_FILES.map((side) => rm(incoming + side, { force: true })));
  }
}
