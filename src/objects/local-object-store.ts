// The object store on the local filesystem (the embedded default): one file per key under `root`.
// A put streams into `root/.partial/…` and renames into place when complete (rename is atomic on one
// filesystem), so a reader never sees a partial object, even if the process is killed mid-put.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertValidKey, type ByteRange, type ObjectBody, type ObjectInfo, type ObjectStore } from './object-store.js';

const PARTIAL_DIR = '.partial';

export class LocalObjectStore implements ObjectStore {
  constructor(readonly root: string) {}

  private pathOf(key: string): string {
    assertValidKey(key);
    return join(this.root, key);
  }

  /** Partial files of one key share a prefix, so a retry can remove what a crashed put left. */
  private partialPrefix(key: string): string {
    return `${key.replace(/\//g, '__')}.`;
  }

  async put(key: string, body: ObjectBody): Promise<ObjectInfo> {
    const final = this.pathOf(key);
    const partialDir = join(this.root, PARTIAL_DIR);
    // Export files are account data: private to the server's user.
    await mkdir(partialDir, { recursive: true, mode: 0o700 });
    await mkdir(dirname(final), { recursive: true, mode: 0o700 });
    const tmp = join(partialDir, `${this.partialPrefix(key)}${randomBytes(6).toString('hex')}.part`);
    try {
      const source: Readable = 'path' in body ? createReadStream(body.path) : body;
      await pipeline(source, createWriteStream(tmp, { flags: 'wx', mode: 0o600 }));
      const fh = await open(tmp, 'r');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
      await rename(tmp, final);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    const info = await this.stat(key);
    if (!info) throw new Error(`Object ${key} vanished right after it was stored.`);
    return info;
  }

  async stat(key: string): Promise<ObjectInfo | undefined> {
    try {
      const s = await stat(this.pathOf(key));
      return s.isFile() ? { key, sizeBytes: s.size, modifiedAt: s.mtime } : undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async check(): Promise<void> {
    // A file made and removed where puts make theirs: the folder exists or can be made, and takes writes.
    const probe = join(this.root, PARTIAL_DIR, `check.${randomBytes(6).toString('hex')}`);
    try {
      await mkdir(dirname(probe), { recursive: true, mode: 0o700 });
      await writeFile(probe, '', { flag: 'wx', mode: 0o600 });
      await rm(probe, { force: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new Error(`export directory ${this.root} (EXPORTS_DIR): cannot write${code ? ` (${code})` : ''}`, { cause: err });
    }
  }

  createReadStream(key: string, range?: ByteRange): Readable {
    return createReadStream(this.pathOf(key), range ? { start: range.start, end: range.end } : undefined);
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async cleanupPartial(key: string): Promise<void> {
    assertValidKey(key);
    const dir = join(this.root, PARTIAL_DIR);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    const prefix = this.partialPrefix(key);
    await Promise.all(names.filter((n) => n.startsWith(prefix)).map((n) => rm(join(dir, n), { force: true })));
  }
}
