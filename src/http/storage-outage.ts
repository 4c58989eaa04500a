import type { FastifyBaseLogger } from 'fastify';

// While the storage cannot be reached, every keyed call answers 503 service_unavailable. The
// operator needs the cause once and the end of it, not a line per refused call (thousands a
// second): the first refusal logs a warning with its cause, the calls refused meanwhile are only
// counted (their lines go to debug), and a probe every second logs, once the storage answers
// again, how long it was out and how many calls were refused.
export class StorageOutage {
  private since: number | null = null;
  private refused = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    /** A cheap statement that succeeds only when the storage answers. */
    private readonly probe: () => Promise<unknown>,
    private readonly log: FastifyBaseLogger,
    private readonly everyMs = 1000,
  ) {}

  /** True while an outage is known: its refusals are already reported. */
  get down(): boolean {
    return this.since !== null;
  }

  /** A call was refused with 503 because the storage could not be reached. */
  refusedCall(err: unknown): void {
    this.refused++;
    if (this.since !== null || this.closed) return;
    this.since = Date.now();
    const e = err as { code?: unknown; message?: unknown };
    this.log.warn(
      { cause: { code: e.code, message: e.message } },
      'storage cannot be reached: keyed calls answer 503 service_unavailable, uncharged, until it answers again',
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
    this.log.info({ seconds, refused: this.refused }, 'storage answers again: calls are served');
    this.since = null;
    this.refused = 0;
  }
}
