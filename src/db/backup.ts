// An online copy of the embedded store, taken while the server runs. SQLite's backup API copies the
// database's pages as of one read transaction; in one step, so that the writes going on meanwhile
// never restart it (a copy in steps starts over whenever another connection writes), and in WAL
// mode those writes do not wait for it. The copy is written beside the target, checked, flushed
// and linked into place, so a file under the target's name is always a whole, consistent backup.
import { randomBytes } from 'node:crypto';
import { chmod, link, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { fsyncPath } from './fsync-path.js';

export class BackupTargetExistsError extends Error {
  constructor(readonly file: string) {
    super(`${file} already exists: choose a new file name (a backup never overwrites one).`);
    this.name = 'BackupTargetExistsError';
  }
}

export interface BackupResult {
  file: string;
  bytes: number;
  pages: number;
}

/** All pages in the next step: better-sqlite3 takes the step's size from the progress callback. */
const ALL_PAGES = 0x7fffffff;

export async function backupSqlite(source: SQLite.Database, file: string): Promise<BackupResult> {
  if (await stat(file).then(() => true, () => false)) throw new BackupTargetExistsError(file);
  const partial = `${file}.partial-${randomBytes(4).toString('hex')}`;
  try {
    const { totalPages } = await source.backup(partial, { progress: () => ALL_PAGES });
    // It holds key hashes, the link-signing secret and every account's data, as the store does.
    await chmod(partial, 0o600);
    const copy = new SQLite(partial);
    try {
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new Error(`the copy failed SQLite's quick_check: ${String(check)}`);
      // A file on its own: a WAL-mode file makes SQLite create -wal and -shm files beside it
      // whenever it is opened, even to read (sdg restore's check did so next to the backup). The
      // server puts the restored store back in WAL mode when it opens it.
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    fsyncPath(partial);
    // Into place without replacing a file made meanwhile: link() fails where rename() would overwrite.
    await link(partial, file).catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'EEXIST' ? new BackupTargetExistsError(file) : err;
    });
    fsyncPath(dirname(file));
    return { file, bytes: (await stat(file)).size, pages: totalPages };
  } finally {
    await Promise.all(['', '-wal', '-shm', '-journal'].map((s) => rm(partial + s, { force: true })));
  }
}
