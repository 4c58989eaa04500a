// What changes once a SQLite connection writes fast (a crawl's ingest, a busy API); a process that
// writes little (the command line, an export) keeps SQLite's defaults and its memory.
//
// - Checkpoints leave the event loop. SQLite's automatic checkpoint runs inside the commit that
//   crosses its threshold (1,000 pages), on the writer's thread, with two fsyncs: under a bulk
//   ingest that is a third of the time. A worker thread with a connection of its own takes over
//   (about 10 MB): a PASSIVE checkpoint every 100 ms copies committed frames to the database file
//   while writers go on. The main connection's automatic checkpoint stays as a backstop at a high
//   threshold (256 MiB of WAL): it fires only when the WAL could not be reset for a long stretch of
//   writes (a reset needs a moment where every frame is copied). Under a crawl's writes, which never
//   pause, that is every 256 MiB, and it runs on the event loop: its runs are the longest stalls a
//   request sees during a first crawl (docs/benchmarks.md, "Scaling"). Without it the WAL grew to 23 GB.
//   The WAL file then keeps its size after a reset, up to 256 MiB: cutting it back and growing it
//   again costs the writer block allocations on every frame.
// - The page cache grows from 2 MB to 64 MB, but only once tweets are ingested in bulk (a crawl):
//   new tweets land all over two of the tweets indexes (by id and by time: a page of one account's
//   tweets spreads across everyone's), so with the default cache nearly every insert first reads an
//   index page back from the file. A busy API appends to the ledger, which touches few pages: there
//   a large cache would only fill with pages written once (64 MB of resident memory, measured).
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

const CACHE_KIB = 64 * 1024;
/**
 * The WAL's size kept after a reset, and the size at which the writer checkpoints itself once the
 * worker runs (in frames of the store's page size: 65,536 frames of a 16 KiB store's pages let a
 * crawl's WAL reach 1 GiB; now it peaks a little above this).
 */
const WAL_KEPT_BYTES = 256 * 1024 * 1024;
/** Rows changed by this connection within one look (every 200 ms) that switch to the busy settings. */
const START_ROWS = 2_000;
const LOOK_MS = 200;
const CHECKPOINT_MS = 100;

// Plain CommonJS, so the worker needs no TypeScript loader: open, checkpoint on a timer, close on
// request. A failed checkpoint (another process holds the checkpoint lock) is retried next tick.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export class BusyWriter {
  private worker: Worker | undefined;
  private exited: Promise<void> = Promise.resolve();
  private readonly look: NodeJS.Timeout;
  private lastChanges = 0;
  private bulkRows = 0;
  private cacheRaised = false;

  /** `sqlite` is the store's connection to the WAL database at `path`. */
  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly path: string,
  ) {
    const totalChanges = sqlite.prepare('select total_changes()').pluck();
    this.look = setInterval(() => {
      if (!sqlite.open) return;
      const n = totalChanges.get() as number;
      if (!this.worker && n - this.lastChanges >= START_ROWS) this.start();
      this.lastChanges = n;
      if (!this.cacheRaised && this.bulkRows >= START_ROWS) {
        this.cacheRaised = true;
        this.sqlite.pragma(`cache_size = -${CACHE_KIB}`);
      }
      this.bulkRows = 0;
      if (this.worker && this.cacheRaised) clearInterval(this.look);
    }, LOOK_MS);
    this.look.unref();
  }

  /** Rows of a bulk ingest (the tweet store's writes): enough of them grow the page cache. */
  noteBulkRows(rows: number): void {
    this.bulkRows += rows;
  }

  private start(): void {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, path: this.path, intervalMs: CHECKPOINT_MS } });
    // Never what keeps the process alive.
    worker.unref();
    // If the worker cannot run, the writer checkpoints as it did before.
    worker.on('error', () => {
      if (this.sqlite.open) this.sqlite.pragma('wal_autocheckpoint = 1000');
    });
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    this.worker = worker;
    const pageSize = this.sqlite.pragma('page_size', { simple: true }) as number;
    this.sqlite.pragma(`wal_autocheckpoint = ${Math.floor(WAL_KEPT_BYTES / pageSize)}`);
    this.sqlite.pragma(`journal_size_limit = ${WAL_KEPT_BYTES}`);
  }

  /** Stops looking and closes the worker's connection (after a checkpoint in progress). */
  async close(): Promise<void> {
    clearInterval(this.look);
    if (!this.worker) return;
    // Held open until the worker is gone (an unref'd worker would let the process exit mid-wait).
    this.worker.ref();
    this.worker.postMessage('close');
    await this.exited;
  }
}
