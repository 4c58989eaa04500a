// The embedded store's file removed (rm -rf DATA_DIR, a volume unmounted) or replaced under a running
// server: SQLite keeps writing to the open, now nameless file, so the server went on serving and
// charging, and everything since (and before) was gone at the next start. Its identity is checked
// every few seconds; once it is gone, keyed calls, /readyz and the outage probe fail as the store
// unavailable (503), with this error's code as the cause, until the process is restarted.
import { statSync } from 'node:fs';
import { STORE_FILE_GONE } from '../errors/store-unavailable.js';

const CHECK_MS = 2_000;

export interface StoreFileWatch {
  /** The error calls fail with once the file is removed or replaced; undefined while it is in place. */
  gone(): Error | undefined;
  close(): void;
}

export function watchStoreFile(path: string, checkMs = CHECK_MS): StoreFileWatch {
  const first = statSync(path);
  let gone: Error | undefined;
  const check = (): void => {
    let what: string | undefined;
    try {
      const now = statSync(path);
      if (now.ino !== first.ino || now.dev !== first.dev) what = 'replaced by another file';
    } catch (err) {
      what = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'removed' : `unreadable (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
    }
    if (!what) return;
    gone = Object.assign(new Error(`The embedded store's file ${path} was ${what} while the server ran: what it wrote since is not in any file. Restore it (sdg restore) or restart on the store wanted.`), { code: STORE_FILE_GONE });
    clearInterval(timer);
  };
  const timer = setInterval(check, checkMs);
  timer.unref();
  return {
    gone: () => gone,
    close: () => clearInterval(timer),
  };
}
