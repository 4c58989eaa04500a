// Failures that mean the gateway cannot use its storage right now (Postgres down or restarting,
// its connections refused or cut, SQLite locked by another process past the busy timeout; either
// out of disk, or refusing writes), as opposed to a fault of ours: they answer 503
// `service_unavailable` with Retry-After, not 500.

// Postgres SQLSTATEs: class 08 (connection exceptions), and admin shutdown, crash shutdown, cannot
// connect now (starting up or in recovery), too many connections; disk full, out of memory; a
// read-only transaction (a standby, or a primary failed over to one).
const POSTGRES = new Set(['57P01', '57P02', '57P03', '53300', '53100', '53200', '25006']);
// SQLite: locked past the busy timeout; the disk (or the file system) full, failing or read-only.
const SQLITE = /^SQLITE_(BUSY|FULL|IOERR|READONLY)(_|$)/;
// The socket errors pg passes through when it cannot reach the server.
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** The code of the error the embedded store's calls fail with once its file was removed or replaced (db/store-file-watch.ts). */
export const STORE_FILE_GONE = 'STORE_FILE_REMOVED';

/** Set on the errors of the S3 object store's client: its network errors are not the database's. */
const OBJECT_STORE = Symbol.for('sdg.objectStoreError');

/** Marks `err` as the object store's (src/objects/s3-object-store.ts), so that isStoreUnavailable does not take it for the database's. */
export function markObjectStoreError(err: unknown): unknown {
  if (err !== null && typeof err === 'object') (err as Record<symbol, boolean>)[OBJECT_STORE] = true;
  return err;
}

export function isStoreUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e) return false;
  // S3 cut off (ECONNREFUSED and the like) is not the database: it was logged as "storage
  // unavailable" and made /readyz answer `store unavailable` while Postgres was fine.
  if ((e as Record<symbol, unknown>)[OBJECT_STORE] === true) return false;
  if (typeof e.code === 'string') {
    if (e.code.startsWith('08') || POSTGRES.has(e.code) || NETWORK.has(e.code)) return true;
    if (SQLITE.test(e.code)) return true;
    // The embedded store's file removed or replaced under the server (db/store-file-watch.ts).
    if (e.code === STORE_FILE_GONE) return true;
  }
  return messageCause(e.message) !== undefined;
}

// pg's own messages for a connection that ended or could not be had (they carry no code).
// ('timeout expired': a client's own connectionTimeoutMillis, db/connect.ts.)
const MESSAGES: Array<[RegExp, string]> = [
  [/^Connection terminated/, 'CONNECTION_TERMINATED'],
  [/^(timeout exceeded when trying to connect|timeout expired$)/, 'CONNECT_TIMEOUT'],
  [/^Client has encountered a connection error/, 'CONNECTION_ERROR'],
];

function messageCause(message: unknown): string | undefined {
  if (typeof message !== 'string') return undefined;
  return MESSAGES.find(([re]) => re.test(message))?.[1];
}

/**
 * What made the store unavailable, as a code (a SQLSTATE, a socket error, one of pg's messages
 * named): for /readyz, which gives a code, never a message.
 */
export function unavailableCause(err: unknown): string | undefined {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (!e) return undefined;
  return typeof e.code === 'string' ? e.code : messageCause(e.message);
}
