// Where export files live. Shaped like an S3 bucket (keys, whole-object puts, ranged reads),
// so an S3 implementation can replace LocalObjectStore without touching the export code.
import type { Readable } from 'node:stream';

export interface ObjectInfo {
  key: string;
  sizeBytes: number;
  modifiedAt: Date;
}

export interface ByteRange {
  start: number;
  /** Inclusive. */
  end: number;
}

/** A body to store: a stream (consumed to its end) or a local file (copied). */
export type ObjectBody = Readable | { path: string };

export interface ObjectStore {
  /**
   * Stores the whole body under `key`, atomically: until put resolves nothing is visible at `key`
   * (a reader sees the previous object or none), and a failed or interrupted put leaves nothing there.
   */
  put(key: string, body: ObjectBody): Promise<ObjectInfo>;
  /** undefined when there is no object at `key`. */
  stat(key: string): Promise<ObjectInfo | undefined>;
  /**
   * The object's bytes, or those of `range` (both ends inclusive, as in HTTP and fs); the stream
   * errors when there is no object at `key`.
   */
  createReadStream(key: string, range?: ByteRange): Readable;
  /** Removes the object; no error when there is none. */
  delete(key: string): Promise<void>;
  /** Removes leftovers of interrupted puts of `key` (a crash mid-put); no-op where puts leave none. */
  cleanupPartial?(key: string): Promise<void>;
  /**
   * A URL the client fetches the object from directly, without the gateway, valid for `ttlSeconds`
   * from `now` (an S3 presigned GET). Stores clients cannot reach (a local directory) do not have it,
   * and the gateway serves their files under its own signed link.
   */
  presignGet?(key: string, opts: PresignOptions): Promise<PresignedUrl>;
  /**
   * Resolves if the store can be written to as configured; else rejects saying why in one line
   * (a bucket that does not answer, does not exist, or refuses the credentials). Run at start.
   */
  check?(): Promise<void>;
  /** Releases connections (a network store). */
  close?(): void;
}

export interface PresignOptions {
  ttlSeconds: number;
  now: Date;
  /** Offered to the client as the file's name (Content-Disposition). */
  filename: string;
}

export interface PresignedUrl {
  url: string;
  expiresAt: string;
}

const KEY = /^[A-Za-z0-9][A-Za-z0-9_.-]*(\/[A-Za-z0-9][A-Za-z0-9_.-]*)*$/;

/** Keys are relative paths of safe segments: no '..', no leading '/', no empty segment. */
export function assertValidKey(key: string): void {
  if (key.length > 512 || !KEY.test(key) || key.split('/').some((s) => s === '.' || s === '..')) {
    throw new Error(`Invalid object key: ${JSON.stringify(key)}`);
  }
}
