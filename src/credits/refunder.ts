// Every API process on Postgres refunds, once Postgres answers again, the calls it answered 503 with
// details.maybeCharged whose charge had committed (refunds.ts). What it could not settle before it
// stops is logged, one warn line a call, with the command that settles it.
import type { LostCharges, RefundPass } from './refunds.js';

interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** How long a stopping process tries once more before it logs what is left. */
const LAST_PASS_MS = 3_000;

export function startRefunder(charges: Pick<LostCharges, 'pass' | 'size' | 'list'> | undefined, log: Log, opts: { everyMs: number } = { everyMs: 2_000 }): { stop(): Promise<void> } {
  if (!charges) return { stop: async () => undefined };
  let running: Promise<void> | undefined;
  /** Request ids whose failure to refund was logged (once each). */
  const warned = new Set<string>();
  const run = (): Promise<void> => {
    if (running) return running;
    if (charges.size === 0) return Promise.resolve();
    running = charges
      .pass()
      .then((done) => report(done, log, warned))
      .catch(() => undefined)
      .finally(() => (running = undefined));
    return running;
  };
  const timer = setInterval(() => void run(), opts.everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      // One deadline for the pass under way (it may wait on a connection that Postgres does not
      // answer) and one more: the lines below must be out before the stop's drain limit.
      let expired: NodeJS.Timeout | undefined;
      const deadline = new Promise((r) => (expired = setTimeout(r, LAST_PASS_MS)));
      await Promise.race([(running ?? Promise.resolve()).then(run), deadline]);
      clearTimeout(expired);
      for (const c of charges.list()) {
        log.warn(
          { requestId: c.requestId, accountId: c.accountId },
          `charge outcome unknown and not settled before this process stopped (Postgres did not answer): \`sdg credits refund ${c.accountId} ${c.requestId}\` refunds it if it was charged`,
        );
      }
    },
  };
}

function report(done: RefundPass, log: Log, warned: Set<string>): void {
  for (const d of done) {
    const ids = { requestId: d.charge.requestId, accountId: d.charge.accountId };
    if (d.outcome === 'refunded') log.info({ ...ids, amount: d.amount, balance: d.balance }, 'refunded the charge of a call answered 503 (maybeCharged): its charge had committed');
    else if (d.outcome === 'not_charged' || d.outcome === 'already_refunded') log.info({ ...ids, outcome: d.outcome }, 'a call answered 503 (maybeCharged) owes nothing back: it was not charged');
    else if (!warned.has(ids.requestId)) {
      warned.add(ids.requestId);
      log.warn({ ...ids, err: d.error }, 'could not settle a call answered 503 (maybeCharged) yet: tried again every 2 s');
    }
  }
}
