// Postgres cut off by a network partition (packets dropped, no reset) leaves a statement sent on an
// open connection without an answer, and the kernel reports nothing for many minutes: every keyed
// call, /readyz and the jobs waited for as long as the partition lasted. A statement timeout cannot
// tell that from a slow statement (a migration, a lock waited for), and pg's query_timeout leaves the
// client busy. So: a connection whose statement has had no byte of answer for STALL_MS is a
// suspect; the server is then asked `select 1` on a connection of its own. If that fails too, the
// suspects are closed, and their statements fail as on any lost connection (a 503; a charge whose
// outcome is unknown is settled as lost-answers.ts does). If it answers, the server is there and the
// statement is merely slow: left alone.
import type { Duplex } from 'node:stream';
import type pg from 'pg';

export const STALL_MS = 5_000;
/** The probe's connect and `select 1` together. */
export const PROBE_TIMEOUT_MS = 3_000;

interface Watched {
  /** The last statement sent or byte received (performance.now()). */
  last: number;
}

// pg's Client keeps these as plain fields.
interface ClientInternals {
  activeQuery?: unknown;
  connection?: { stream?: Duplex };
}

export class StallGuard {
  private readonly watched = new Map<pg.PoolClient, Watched>();
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  private lastProbe = -Infinity;

  constructor(
    /** Opens a connection of its own and runs `select 1`; rejects if the server cannot be reached in PROBE_TIMEOUT_MS. */
    private readonly probe: () => Promise<void>,
    private readonly onCut: (connections: number) => void = () => undefined,
    private readonly stallMs = STALL_MS,
  ) {}

  /** Watches every connection `pool` opens. */
  watch(pool: pg.Pool): pg.Pool {
    pool.on('connect', (client) => {
      const w: Watched = { last: performance.now() };
      this.watched.set(client, w);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        w.last = performance.now();
        return query(...args);
      };
      (client as unknown as ClientInternals).connection?.stream?.on('data', () => {
        w.last = performance.now();
      });
      client.once('end', () => this.watched.delete(client));
      this.start();
    });
    return pool;
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check(), Math.min(1_000, this.stallMs / 2));
    this.timer.unref();
  }

  /** Connections with a statement under way and nothing heard for stallMs. */
  private suspects(now: number): pg.PoolClient[] {
    const out: pg.PoolClient[] = [];
    for (const [client, w] of this.watched) if ((client as unknown as ClientInternals).activeQuery && now - w.last >= this.stallMs) out.push(client);
    return out;
  }

  private async check(): Promise<void> {
    const now = performance.now();
    // One probe at a time, and at most one each stallMs while a slow statement runs on a live server.
    if (this.probing || now - this.lastProbe < this.stallMs || this.suspects(now).length === 0) return;
    this.probing = true;
    this.lastProbe = now;
    try {
      await this.probe();
    } catch {
      // Still suspects once the probe has failed: closed, which fails their statements.
      const cut = this.suspects(performance.now());
      // ETIMEDOUT: a network failure, so the statement's caller sees the store unavailable (a 503).
      const error = () => Object.assign(new Error(`No answer from Postgres for ${this.stallMs / 1000} s, and it cannot be reached.`), { code: 'ETIMEDOUT' });
      for (const client of cut) (client as unknown as ClientInternals).connection?.stream?.destroy(error());
      if (cut.length > 0) this.onCut(cut.length);
    } finally {
      this.probing = false;
    }
  }
}

/** The probe: a client of its own, connect and `select 1` within PROBE_TIMEOUT_MS, then closed whatever happened. */
export function selectOneProbe(Client: typeof pg.Client, connectionString: string): () => Promise<void> {
  return async () => {
    const client = new Client({ connectionString, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
    client.on('error', () => undefined);
    let timer: NodeJS.Timeout | undefined;
    let answered = false;
    const work = client.connect().then(() => client.query('select 1'));
    work.catch(() => undefined);
    try {
      await Promise.race([work, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('probe timed out')), PROBE_TIMEOUT_MS)))]);
      answered = true;
    } catch (err) {
      // Refused by the server itself (too many connections, a pooler full, starting up): it answers,
      // so it is reachable, and the stalled statements are waiting, not lost.
      if (!fromServer(err)) throw err;
    } finally {
      clearTimeout(timer);
      // Ended politely when the server answered (no "unexpected EOF" in its log each probe); else
      // not: over a partition `end` would wait for the server.
      if (answered) client.end().catch(() => undefined);
      else (client as unknown as ClientInternals).connection?.stream?.destroy();
    }
  };
}

/** An error Postgres sent (it carries a SQLSTATE), as opposed to one of the network or a timeout. */
function fromServer(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08');
}
