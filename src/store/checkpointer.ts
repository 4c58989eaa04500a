// WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the commit that
// crosses its threshold, on the writer's thread, with two fsyncs: under a bulk ingest that is a
// third of the time. Here a worker thread with a connection of its own runs a PASSIVE checkpoint
// every `intervalMs` (it copies committed frames to the database file while writers go on), and
// the main connection's automatic checkpoint stays as a backstop at a high threshold: it only
// fires when the WAL could not be reset for a long stretch of writes (a restart needs a moment
// where every frame is copied), and then has little left to copy.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Frames in the WAL before the writer checkpoints itself (4 KiB pages: 128 MiB). */
export const BACKSTOP_FRAMES = 32_768;

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

export class BackgroundCheckpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  /** `onFailure` runs once if the worker cannot run (the caller restores automatic checkpoints). */
  constructor(path: string, onFailure: (err: unknown) => void, intervalMs = 100) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, path, intervalMs } });
    // Never what keeps the process alive.
    this.worker.unref();
    this.worker.on('error', onFailure);
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
  }

  /** Stops the timer and closes the worker's connection (after a checkpoint in progress). */
  async close(): Promise<void> {
    // Held open until the worker is gone (an unref'd worker would let the process exit mid-wait).
    this.worker.ref();
    this.worker.postMessage('close');
    await this.exited;
  }
}
