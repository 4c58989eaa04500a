// Whether another process has the embedded store open: a connection in EXCLUSIVE locking mode
// cannot lock a WAL database that another connection holds, even an idle one. For the operator's
// commands that must not run under a live server (a restore, a migration to a named version).
import { existsSync } from 'node:fs';
import SQLite from 'better-sqlite3';

export function storeInUse(path: string): boolean {
  if (!existsSync(path)) return false;
  const db = new SQLite(path, { fileMustExist: true, timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('begin exclusive');
    db.exec('commit');
    return false;
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) return true;
    throw err;
  } finally {
    db.close();
  }
}
