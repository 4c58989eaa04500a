// The store's two backends behind one Kysely instance: SQLite (embedded default) and Postgres.
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import type { Database } from './schema.js';
import { BusyWriter } from './busy-writer.js';
import { GroupCommit, type GroupOptions } from './group-commit.js';
import { DEFAULT_POOL_SIZE } from './pool-size.js';
import { StorageOutage } from './storage-outage.js';
import { serverProbe, StallGuard } from './stall-guard.js';
import { watchStoreFile } from './store-file-watch.js';
import { TransactionalDdlSqliteDialect } from './sqlite-dialect.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The raw SQLite handle, for the few hot paths that run prepared statements synchronously. */
  sqlite?: SQLite.Database;
  /**
   * SQLite: runs `fn` (synchronous statements on `sqlite`) in the next group commit, as its own
   * savepoint, resolving once that commit is durable. Concurrent writers share one commit.
   * The commit waits while a Kysely transaction is open on the connection, so never await a grouped
   * write from inside a Kysely transaction of the same store: it would wait for itself.
   * A `rerunnable` job (no effect but its statements) runs without a savepoint of its own.
   */
  grouped?: <T>(fn: () => T, opts?: GroupOptions) => Promise<T>;
  /** Postgres: a small pool for the metering's group charges, whose sessions always use a statement's generic plan (see openStore). */
  chargeDb?: Kysely<Database>;
  /**
   * Postgres: who hears of a pooled connection lost while idle (Postgres restarted, the connection
   * terminated by an administrator or a timeout). The pool drops it and the next query opens another.
   */
  onConnectionLost?: (handler: (err: Error) => void) => void;
  /** SQLite: the file's page size (a new file's is StoreOptions.sqlitePageSize; an existing one keeps its own). */
  sqlitePageSize?: number;
  /** SQLite: tells the store that `rows` rows of a bulk ingest were written (see busy-writer.ts). */
  noteBulkRows?: (rows: number) => void;
  /** SQLite: the error every keyed call fails with once the store's file was removed or replaced (store-file-watch.ts). */
  fileGone?: () => Error | undefined;
  /** Reports an outage of this store once, with its cause and its end (storage-outage.ts); absent on test fakes. */
  outage?: StorageOutage;
  /** Closes connections; the store is unusable afterwards. */
  close(): Promise<void>;
}

// pg is loaded only for a Postgres store: the embedded default need not carry it (3 MB of heap).
let pgModule: typeof pg | undefined;
function loadPg(): typeof pg {
  if (!pgModule) {
    pgModule = createRequire(import.meta.url)('pg') as typeof pg;
    // int8 (COUNT, bigint columns) arrives as text by default; our amounts fit in a double exactly.
    pgModule.types.setTypeParser(20, (v: string) => Number(v));
  }
  return pgModule;
}

export interface StoreOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** SQLite file name inside dataDir, or ':memory:'. */
  sqliteFile?: string;
  /** SQLite: the page size of a new file (SQLITE_PAGE_SIZE); default DEFAULT_SQLITE_PAGE_SIZE. */
  sqlitePageSize?: number | undefined;
  poolSize?: number;
}

/** The page size of a new embedded store (see openSqlite for why). */
export const DEFAULT_SQLITE_PAGE_SIZE = 8_192;

export function openStore(opts: StoreOptions): Store {
  const store = opts.databaseUrl ? openPostgres(opts.databaseUrl, opts.poolSize) : openSqlite(opts);
  const sqlite = store.sqlite;
  const outage = new StorageOutage(
    sqlite
      ? async () => {
          const gone = store.fileGone?.();
          if (gone) throw gone;
          probeSqliteWrite(sqlite);
        }
      : () => probeWrite(store.db),
  );
  const close = store.close;
  return {
    ...store,
    outage,
    close: async () => {
      outage.close();
      await close();
    },
  };
}

// The outage report's probe is a small committed write, not a `select 1`: a store that answers
// reads but refuses writes (a full disk, a Postgres failed over to a read-only standby, another
// process holding SQLite's write lock) still refuses every charge. One row, rewritten in place.
const PROBE_KEY = 'storage_probe';

async function probeWrite(db: Kysely<Database>): Promise<void> {
  const value = new Date().toISOString();
  await db.insertInto('settings').values({ key: PROBE_KEY, value }).onConflict((oc) => oc.column('key').doUpdateSet({ value })).execute();
}

function openPostgres(databaseUrl: string, poolSize: number | undefined): Store {
  const { Pool, Client } = loadPg();
  // A partition leaves statements and new connections without an answer and without an error:
  // stall-guard.ts closes stalled connections once the server cannot be reached, and a connection
  // not made in CONNECT_TIMEOUT_MS fails (pg waits for ever by default). Either is a 503.
  const guard = new StallGuard(serverProbe(Client, databaseUrl));
  // On the client, not the pool: the pool's connectionTimeoutMillis also bounds the wait for a free
  // connection, which made statements queued behind slow ones on a live server 503s.
  class TimedClient extends Client {
    constructor(config?: string | pg.ClientConfig) {
      super({ ...(typeof config === 'string' ? { connectionString: config } : config), connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    }
  }
  const pool = withPreparedStatements(guard.watch(new Pool({ connectionString: databaseUrl, max: poolSize ?? DEFAULT_POOL_SIZE, Client: TimedClient })));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  // The metering's group charge runs on sessions of its own that always use a prepared statement's
  // generic plan. Left to Postgres's choice, that statement (its parameters are arrays) was planned
  // anew on every run once the tables held a few hundred accounts: 0.25 ms of Postgres's CPU for a
  // group of 25 charges on one account, more than running it (0.17 ms), and 0.4 ms for a group over
  // 50 accounts (EXPLAIN ANALYZE, 100,000 accounts stored). Its generic plan finds every row through
  // an index (test/scale/charge-plan.test.ts). Only that statement: others, such as a lookup by
  // lease owner, are better planned for the value at hand. Connections are opened on first use, so
  // a store that never charges (the command line, a worker) opens none.
  const chargePool = withPreparedStatements(genericPlans(guard.watch(new Pool({ connectionString: databaseUrl, max: CHARGE_POOL_SIZE, Client: TimedClient }))));
  const chargeDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool: chargePool }) });
  // An idle client's error is emitted by its pool, and an 'error' event nobody listens to would
  // end the process: every API process at once when Postgres restarts. Until the server sets a
  // handler (it logs), the pool's own dropping of the client is all that happens.
  let lost: (err: Error) => void = () => undefined;
  // pg-pool hangs the client on the error: logged, it dumped the connection's settings and every
  // prepared statement's text on one line. The handler gets the error alone.
  for (const p of [pool, chargePool]) {
    p.on('error', (err) => lost(Object.assign(err, { client: undefined })));
    // pg-pool listens to a client's errors only while it is idle. A client checked out (in a
    // transaction between statements, or just taken for a query) whose connection dies emitted
    // 'error' to nobody, which ended the process: a worker or scheduler did, at a Postgres restart.
    // Its next statement fails with the error instead (a 503, or a job retried), and the pool drops
    // the client when it is released.
    p.on('connect', (client) => client.on('error', () => undefined));
  }
  return {
    db,
    chargeDb,
    dialect: 'postgres',
    onConnectionLost: (handler) => {
      lost = handler;
    },
    close: async () => {
      guard.close();
      await chargeDb.destroy();
      await db.destroy();
    },
  };
}

/** How long a new Postgres connection may take (connect, TLS, authentication). */
export const CONNECT_TIMEOUT_MS = 10_000;

/** The embedded store's file in DATA_DIR. */
export const SQLITE_FILE = 'gateway.sqlite';

function openSqlite(opts: StoreOptions): Store {
  const file = opts.sqliteFile ?? SQLITE_FILE;
  let path = file;
  if (file !== ':memory:') {
    // The store holds the signing secret and every account's data: private to the server's user.
    // SQLite gives its -wal and -shm files the database file's mode.
    mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
    chmodSync(opts.dataDir, 0o700);
    path = join(opts.dataDir, file);
    closeSync(openSync(path, 'a', 0o600));
    chmodSync(path, 0o600);
  }
  const sqlite = new SQLite(path);
  // 8 KiB pages rather than SQLite's 4 KiB: a crawl's tweets (about 660 bytes of JSON each) land across
  // three indexes, and with 4 rows a page the trees are deeper and split more often (the crawl's page
  // writer into a new store: 69,000 tweets/s with 4 KiB, 79,000 with 8 KiB, 86,000 with 16 KiB). But
  // in a large store each new tweet dirties a page of its own in the indexes by id and by time, and
  // each commit writes its dirty pages whole to the WAL: over 10,000 accounts the first crawl took
  // 139-142 s with 16 KiB pages against 117-121 s with 8 KiB (2026-11-28, docs/benchmarks.md). It
  // takes effect only on a new file: an existing store keeps the page size it was made with. The
  // operator may choose another (SQLITE_PAGE_SIZE, validated in config.ts) for a store's expected use.
  sqlite.pragma(`page_size = ${opts.sqlitePageSize ?? DEFAULT_SQLITE_PAGE_SIZE}`);
  sqlite.pragma('journal_mode = WAL');
  const sqlitePageSize = sqlite.pragma('page_size', { simple: true }) as number;
  sqlite.pragma('synchronous = NORMAL');
  // Other processes (the `sdg` command line, a second server) may hold the write lock briefly.
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  // Statement journals (savepoints of grouped jobs, see group-commit.ts) in memory, not in temp files.
  sqlite.pragma('temp_store = MEMORY');
  // Once this connection writes fast, checkpoints move to a worker and the page cache grows (see busy-writer.ts).
  const group = new GroupCommit(sqlite);
  const busy = file === ':memory:' ? undefined : new BusyWriter(sqlite, path, { holdWrites: (scope) => group.hold(scope) });
  const watch = file === ':memory:' ? undefined : watchStoreFile(path);
  const db = new Kysely<Database>({ dialect: new TransactionalDdlSqliteDialect({ database: withStatementCache(sqlite) }) });
  const close = async () => {
    watch?.close();
    // The worker's connection first: the last connection to close checkpoints and removes the WAL.
    await busy?.close();
    await db.destroy();
  };
  return { db, dialect: 'sqlite', sqlite, sqlitePageSize, grouped: (fn, opts) => group.run(fn, opts), ...(busy ? { noteBulkRows: (rows: number) => busy.noteBulkRows(rows) } : {}), ...(watch ? { fileGone: watch.gone } : {}), close };
}

/**
 * The probe's write on SQLite, without waiting for the write lock: better-sqlite3 waits on the
 * event loop's thread, and while another process holds the lock the probe is to fail, not to wait
 * for the busy timeout. On the store's own connection, so that it meets what every write meets.
 * Skipped (failed) while that connection is inside a transaction of its own.
 */
function probeSqliteWrite(sqlite: SQLite.Database): void {
  if (sqlite.inTransaction) throw new Error('the connection is inside a transaction: probe again later');
  const timeout = sqlite.pragma('busy_timeout', { simple: true }) as number;
  sqlite.pragma('busy_timeout = 0');
  try {
    sqlite.prepare('insert into settings (key, value) values (?, ?) on conflict (key) do update set value = excluded.value').run(PROBE_KEY, new Date().toISOString());
  } finally {
    sqlite.pragma(`busy_timeout = ${timeout}`);
  }
}

/** One group charge is in flight at a time (postgres-meter-store.ts); a second connection covers a reconnect. */
const CHARGE_POOL_SIZE = 2;

// A session setting, sent first on each new connection (a query queued before any other on it).
function genericPlans(pool: pg.Pool): pg.Pool {
  pool.on('connect', (client) => {
    // Postgres before 12 has no such setting: the statement then runs on the planner's own choice.
    client.query('set plan_cache_mode = force_generic_plan').catch(() => undefined);
  });
  return pool;
}

// Postgres parses and plans every unnamed statement anew: for the metering's group statement (a
// few CTEs over unnest) that was most of its cost, 0.7 ms of server CPU a group. Kysely always sends
// the same text for one query shape, so each distinct text with parameters gets a name, and pg
// prepares it once per connection (bounded: texts beyond `max` run unnamed). Statements without
// parameters (migrations' DDL, several statements in one text) keep the simple protocol.
function withPreparedStatements(pool: pg.Pool, max = 500): pg.Pool {
  const names = new Map<string, string>();
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < max) names.set(text, (name = `sdg_${names.size}`));
    return name;
  };
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
      if (typeof config === 'string' && Array.isArray(values) && values.length > 0 && callback === undefined) {
        const name = nameOf(config);
        if (name) return query({ name, text: config, values });
      }
      return query(config, values, callback);
    };
  });
  return pool;
}

// Kysely prepares every query anew; the SQL of one query shape is always the same text, so keep
// the prepared statements (bounded, oldest dropped first).
// Also: a write that fails for want of room or on an I/O error (SQLITE_FULL, SQLITE_IOERR) can end
// the transaction on its own. Kysely then sends its ROLLBACK, which failed ("no transaction is
// active") and replaced the error that mattered: a full disk answered 500 with that message
// instead of 503. Its ROLLBACK does nothing when no transaction is open.
function withStatementCache(sqlite: SQLite.Database, max = 500): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const rollback = sqlite.prepare('rollback');
  const rollbackIfOpen = { reader: false, run: () => (sqlite.inTransaction ? rollback.run() : { changes: 0, lastInsertRowid: 0 }) };
  return new Proxy(sqlite, {
    get(target, prop, receiver) {
      if (prop === 'prepare') {
        return (text: string) => {
          if (text === 'rollback') return rollbackIfOpen;
          let stmt = cache.get(text);
          // A statement still being iterated (a streamed query) cannot run again: use a fresh one.
          if (stmt?.busy) return target.prepare(text);
          if (!stmt) {
            stmt = target.prepare(text);
            if (cache.size >= max) cache.delete(cache.keys().next().value as string);
            cache.set(text, stmt);
          }
          return stmt;
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
