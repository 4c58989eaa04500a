// While the storage cannot be used (out of reach, full, or refusing writes), every keyed call
// answers 503 service_unavailable and every background job's claim or step fails. The operator
// needs the cause once and the end of it, not a line (and a stack) per refused call or per poll of
// each job kind: the first failure logs a warning with its cause, the failures meanwhile are only
// counted, and a probe every second (a small write, see connect.ts) logs, once the storage answers
// again, how long it was out and how many failures it caused. One per store, so a process reports
// each outage once whatever its roles.

import { unavailableCause } from '../errors/store-unavailable.js';

export interface OutageLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export class StorageOutage {
  private since: number | null = null;
  private causeCode: string | undefined;
  private failures = 0;
  private log: OutageLog | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    /** A cheap write that succeeds only when the storage takes writes again (connect.ts). */
    private readonly probe: () => Promise<unknown>,
    private readonly everyMs = 1000,
  ) {}

  /** True while an outage is known: its failures are already reported. */
  get down(): boolean {
    return this.since !== null;
  }

  /** The error code of the failure that began the outage under way (for /readyz: a code, never a message). */
  get cause(): string | undefined {
    return this.since === null ? undefined : this.causeCode;
  }

  /** Something failed because the storage could not be used (see isStoreUnavailable). */
  failed(err: unknown, log: OutageLog): void {
    this.failures++;
    if (this.since !== null || this.closed) return;
    this.since = Date.now();
    this.log = log;
    const e = err as { code?: unknown; message?: unknown };
    this.causeCode = unavailableCause(err);
    log.warn(
      { cause: { code: e.code, message: e.message } },
      'storage unavailable: keyed calls answer 503 service_unavailable, uncharged, and background jobs wait, until it answers again',
    );
    this.schedule();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.check(), this.everyMs);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    if (this.closed) return;
    try {
      await this.probe();
    } catch {
      this.schedule();
      return;
    }
    const seconds = Math.round((Date.now() - this.since!) / 100) / 10;
    this.log!.info({ seconds, failures: this.failures }, 'storage answers again');
    this.since = null;
    this.failures = 0;
  }
}
