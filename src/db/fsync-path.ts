import { closeSync, fsyncSync, openSync } from 'node:fs';

/** Flushes a file, or a directory's entries (a rename or link into it), to disk. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
