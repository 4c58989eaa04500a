// What changes once a SQLite connection writes fast (a crawl's ingest, a busy API); a process that
// writes little (the command line, an export) keeps SQLite's defaults and its memory.
//
// - Checkpoints leave the event loop. SQLite's automatic checkpoint runs inside the commit that
//   crosses its threshold (1,000 pages), on the writer's thread, with two fsyncs: under a bulk
//   ingest that is a third of the time. A worker thread with a connection of its own takes over
//   (about 10 MB): a PASSIVE checkpoint every 100 ms copies committed frames to the database file
//   while writers go on.
// - The WAL is reset in step with the writer. A reset (the next write starts the WAL file over) needs
//   a moment where every committed frame is copied, and a crawl's writes never leave one: each
//   checkpoint ends behind the commits made while it ran. So once the WAL holds 64 MiB, the worker
//   catches up and asks the main thread to hold the group commit's bulk writes (the crawl's pages
//   wait in the queue; the event loop and the calls' charges go on) while it copies, then every
//   grouped write (the charges too) while it copies the few frames written meanwhile, at most 250 ms
//   in all; the next grouped write then resets the WAL. A write outside the group commit during the
//   copy (a Kysely statement) leaves frames uncopied: the worker copies again while the hold has
//   time, else no reset that time and the worker asks again at its next look. Charges wait through
//   the last copies only, not the first and longest: in a large store these still take 40 ms at the
//   median (over 10,000 accounts; a copy that finds new frames syncs the database file), against 62
//   for the whole hold. Grouped writes due every 2 ms during a first crawl of 10,000 accounts waited
//   26.5 to 27.7 ms at the median and 94.5 to 96.5 at the 99th percentile, against 31.6 to 32.6 and
//   144 to 158 ms when a hold held every write (docs/benchmarks.md, "Scaling").
// - The main connection's automatic checkpoint stays as a backstop at 1 GiB of WAL, for when the
//   holds cannot reset it (another process writing, a long transaction). It runs on the event loop:
//   before the holds, under a crawl, it fired every 256 MiB and its runs were the longest stalls a
//   request saw (docs/benchmarks.md, "Scaling"). At 256 MiB it still fired, 150 to 320 ms a time,
//   when the worker's copy fell behind a first crawl into a large store; the holds reset the WAL a
//   little later if let. Without any backstop, the WAL grew to 23 GB.
//   The WAL file keeps its size after a reset, up to 256 MiB: cutting it back and growing it again
//   costs the writer block allocations on every frame.
// - The page cache grows from 2 MB to 64 MB, but only once tweets are ingested in bulk (a crawl):
//   new tweets land all over two of the tweets indexes (by id and by time: a page of one account's
//   tweets spreads across everyone's), so with the default cache nearly every insert first reads an
//   index page back from the file. A busy API appends to the ledger, which touches few pages: there
//   a large cache would only fill with pages written once (64 MB of resident memory, measured).
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import type { HoldScope } from './group-commit.js';

const CACHE_KIB = 64 * 1024;
/** The WAL's size kept after a reset (journal_size_limit). */
const WAL_KEPT_BYTES = 256 * 1024 * 1024;
/**
 * The WAL's size at which the writer checkpoints itself once the worker runs, counted in bytes: in
 * frames, a count chosen for 4 KiB pages let a 16 KiB store's WAL reach four times the size.
 */
const BACKSTOP_BYTES = 1024 * 1024 * 1024;
/** Rows changed by this connection within one look (every 200 ms) that switch to the busy settings. */
const START_ROWS = 2_000;
const LOOK_MS = 200;
const CHECKPOINT_MS = 100;
/** The WAL's size at which the worker asks for a hold to reset it. */
const RESET_BYTES = 64 * 1024 * 1024;
/** A hold ends after this even if the worker has not answered (a timer: late by at most the turn then running). */
const HOLD_MAX_MS = 250;
/** Catch-up passes stop once one finds fewer new frames than this: the hold copies about as many. */
const CAUGHT_UP_FRAMES = 128;

export interface BusyWriterOptions {
  /** Holds the store's grouped writes, all or the bulk ones; the returned function lets them go (GroupCommit.hold). */
  holdWrites?: (scope: HoldScope) => () => void;
  /** Tests: the WAL's size that asks for a hold (default 64 MiB). */
  resetBytes?: number;
  /** Tests: the longest hold (default 250 ms). */
  holdMaxMs?: number;
}

// Plain CommonJS, so the worker needs no TypeScript loader: open, checkpoint on a timer, close on
// request. A failed checkpoint (another process holds the checkpoint lock) is retried next tick.
// Messages: the worker sends 'hold' (the WAL is large and nearly all copied); the main thread holds
// its grouped writes and answers 'copy', or 'end' when it cannot; the worker copies the rest and
// answers 'done'; the main thread asks to 'copy' again if it wrote meanwhile, else lets the writes
// go and says 'end' (the worker may ask again).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('synchronous = NORMAL');
const checkpoint = () => { try { return db.pragma('wal_checkpoint(PASSIVE)')[0]; } catch { return undefined; } };
const large = (r) => r !== undefined && r.busy === 0 && r.log >= workerData.resetFrames;
let asked = false;
const timer = setInterval(() => {
  if (asked) return;
  let r = checkpoint();
  // Catch up first, so that the hold has little left to copy: each pass copies what was committed
  // while the one before ran.
  for (let i = 0; i < 4 && large(r); i++) {
    const next = checkpoint();
    if (next === undefined) break;
    const fresh = next.log - r.log;
    r = next;
    if (fresh < workerData.caughtUpFrames) break;
  }
  if (large(r)) {
    asked = true;
    parentPort.postMessage('hold');
  }
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m === 'copy') {
    checkpoint();
    parentPort.postMessage('done');
  } else if (m === 'end') {
    asked = false;
  } else {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
`;

export class BusyWriter {
  private worker: Worker | undefined;
  private exited: Promise<void> = Promise.resolve();
  private readonly look: NodeJS.Timeout;
  private lastChanges = 0;
  private bulkRows = 0;
  private cacheRaised = false;
  /** Rows this connection has changed: its writes, seen without reading the WAL. */
  private readonly totalChanges: SQLite.Statement<[], number>;
  /** Lets the bulk writes go while a hold lasts. */
  private release: (() => void) | undefined;
  /** Lets the other grouped writes go, once the hold covers them too (its last copies). */
  private releaseAll: (() => void) | undefined;
  private holdTimer: NodeJS.Timeout | undefined;
  private readonly holdMaxMs: number;
  private heldAt = 0;
  /** This connection's changed rows when the worker's copy began: more at its end means frames it missed. */
  private changesAtCopy = 0;

  /** `sqlite` is the store's connection to the WAL database at `path`. */
  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly path: string,
    private readonly opts: BusyWriterOptions = {},
  ) {
    this.totalChanges = sqlite.prepare<[], number>('select total_changes()').pluck();
    this.holdMaxMs = opts.holdMaxMs ?? HOLD_MAX_MS;
    this.look = setInterval(() => {
      if (!sqlite.open) return;
      const n = this.totalChanges.get()!;
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
    const pageSize = this.sqlite.pragma('page_size', { simple: true }) as number;
    // Without a way to hold writes the worker never asks.
    const resetFrames = this.opts.holdWrites ? Math.max(1, Math.floor((this.opts.resetBytes ?? RESET_BYTES) / pageSize)) : Number.POSITIVE_INFINITY;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { driver, path: this.path, intervalMs: CHECKPOINT_MS, resetFrames, caughtUpFrames: CAUGHT_UP_FRAMES },
    });
    // Never what keeps the process alive.
    worker.unref();
    // If the worker cannot run, the writer checkpoints as it did before.
    worker.on('error', () => {
      this.endHold();
      if (this.sqlite.open) this.sqlite.pragma('wal_autocheckpoint = 1000');
    });
    worker.on('message', (m) => {
      if (m === 'hold') worker.postMessage(this.startHold() ? 'copy' : 'end');
      else if (m === 'done') worker.postMessage(this.copied() ? 'end' : 'copy');
    });
    this.exited = new Promise((resolve) =>
      worker.once('exit', () => {
        this.endHold();
        resolve();
      }),
    );
    this.worker = worker;
    this.sqlite.pragma(`wal_autocheckpoint = ${Math.floor(BACKSTOP_BYTES / pageSize)}`);
    this.sqlite.pragma(`journal_size_limit = ${WAL_KEPT_BYTES}`);
  }

  /**
   * Holds the bulk writes (the crawl's pages) for the worker's copy; false when it cannot lead to a
   * reset now. The other grouped writes (the calls' charges) go on meanwhile: they add few frames,
   * which the copies after it take with every write held (copied()).
   */
  private startHold(): boolean {
    // A transaction of this connection still open (Kysely's span turns) would commit frames during
    // the hold: no reset could follow.
    if (!this.opts.holdWrites || this.release || !this.sqlite.open || this.sqlite.inTransaction) return false;
    this.release = this.opts.holdWrites('bulk');
    this.heldAt = performance.now();
    this.holdTimer = setTimeout(() => this.endHold(), this.holdMaxMs);
    return true;
  }

  /**
   * The worker's copy is done: true when the hold is over. After the first copy every grouped write
   * is held and the worker copies what the others wrote meanwhile. Writes outside the group commit
   * (Kysely's statements, on this connection) may also have added frames during a copy; while time
   * is left, the worker copies again rather than leave them (a frame left uncopied means no reset).
   */
  private copied(): boolean {
    if (!this.release) return true; // the hold ran out meanwhile
    if (!this.releaseAll) {
      if (!this.sqlite.open || this.sqlite.inTransaction) {
        this.endHold();
        return true;
      }
      this.releaseAll = this.opts.holdWrites!('all');
      this.changesAtCopy = this.totalChanges.get()!;
      return false;
    }
    const changes = this.sqlite.open ? this.totalChanges.get()! : this.changesAtCopy;
    if (changes !== this.changesAtCopy && !this.sqlite.inTransaction && performance.now() - this.heldAt < this.holdMaxMs / 2) {
      this.changesAtCopy = changes;
      return false;
    }
    this.endHold();
    return true;
  }

  private endHold(): void {
    clearTimeout(this.holdTimer);
    const release = this.release;
    const releaseAll = this.releaseAll;
    this.release = undefined;
    this.releaseAll = undefined;
    releaseAll?.();
    release?.();
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
