// Postgres cut off by a network partition (packets dropped, no reset) leaves a statement sent on an
// open connection without an answer, and the kernel reports nothing for many minutes: every keyed
// call, /readyz and the jobs waited for as long as the partition lasted. A statement timeout cannot
// tell that from a slow statement (a migration, a lock waited for), and pg's query_timeout leaves the
// client busy. So: a connection whose statement has had no byte of answer for STALL_MS is a
// suspect; the server is then asked, on a connection of its own, what the suspects' sessions are
// doing. If it cannot be reached, the suspects are closed, and their statements fail as on any lost
// connection (a 503; a charge whose outcome is unknown is settled as lost-answers.ts does). If it
// answers, a suspect whose session is running a statement is merely slow: left alone. One whose
// session is gone, or idle since before the stall, lost its way there or back (a NAT or firewall
// that forgot the connection, while new ones pass): its session is ended (a transaction it had open
// would hold its locks until the server's own keepalive noticed, hours by default) and it is
// closed. Through a pooler (PgBouncer) a connection's process id is not its server session's: the
// probe sees that (its own id differs from pg_backend_pid()) and then only tells reachable from not.
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
  /** The server session's process id, from its BackendKeyData (through a pooler, the pooler's). */
  processID?: number | null;
}

/**
 * Opens a connection of its own and asks the server about the sessions `pids`; resolves with those
 * it is not running a statement for (gone, or idle for IDLE_MS), having told the present ones to
 * end, or none when the ids cannot be trusted (a pooler). Rejects if the server cannot be reached
 * in PROBE_TIMEOUT_MS.
 */
export type Probe = (pids: number[]) => Promise<number[]>;

/** How long a suspect's session must have been idle to be taken as lost: an answer sent is read well within it. */
export const IDLE_MS = 2_000;

export class StallGuard {
  private readonly watched = new Map<pg.PoolClient, Watched>();
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  private lastProbe = -Infinity;

  constructor(
    private readonly probe: Probe,
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
    const asked = this.suspects(now);
    // One probe at a time, and at most one each stallMs while a slow statement runs on a live server.
    if (this.probing || now - this.lastProbe < this.stallMs || asked.length === 0) return;
    this.probing = true;
    this.lastProbe = now;
    const pid = (c: pg.PoolClient) => (c as unknown as ClientInternals).processID;
    try {
      let lost: number[];
      try {
        lost = await this.probe(asked.map(pid).filter((p): p is number => typeof p === 'number'));
      } catch {
        // Still suspects once the probe has failed: closed, which fails their statements. ETIMEDOUT:
        // a network failure, so the statement's caller sees the store unavailable (a 503).
        this.cut(this.suspects(performance.now()), 'ETIMEDOUT', 'and it cannot be reached');
        return;
      }
      if (lost.length === 0) return;
      // Still waiting after the probe, with a session the server is not running anything for.
      const still = new Set(this.suspects(performance.now()));
      this.cut(
        asked.filter((c) => still.has(c) && lost.includes(pid(c)!)),
        'ECONNRESET',
        'and the server, which answers new connections, has no statement of this connection under way: the connection was lost on the way',
      );
    } finally {
      this.probing = false;
    }
  }

  private cut(clients: pg.PoolClient[], code: string, why: string): void {
    const error = () => Object.assign(new Error(`No answer from Postgres for ${this.stallMs / 1000} s, ${why}.`), { code });
    for (const client of clients) (client as unknown as ClientInternals).connection?.stream?.destroy(error());
    if (clients.length > 0) this.onCut(clients.length);
  }
}

// The sessions asked about that run no statement: gone, or idle (in a transaction or not) for
// IDLE_MS. Ended only when the probe's own id is its session's (no pooler between), only sessions
// of this role, and in the statement that found them idle.
const LOST_SESSIONS = `
  with asked as (select distinct p from unnest($1::int[]) p),
  seen as (
    select asked.p, a.pid is not null as present,
      a.state in ('idle', 'idle in transaction', 'idle in transaction (aborted)') and a.state_change < now() - make_interval(secs => $2) as idle
    from asked left join pg_stat_activity a on a.pid = asked.p and a.usename = current_user
  )
  select pg_backend_pid() = $3 as direct, p, case when present and idle and pg_backend_pid() = $3 then pg_terminate_backend(p) end as ended
  from seen where not present or idle`;

/** The probe: a client of its own, connect and ask within PROBE_TIMEOUT_MS, then closed whatever happened. */
export function serverProbe(Client: typeof pg.Client, connectionString: string): Probe {
  return async (pids) => {
    const client = new Client({ connectionString, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
    client.on('error', () => undefined);
    let timer: NodeJS.Timeout | undefined;
    let answered = false;
    const work = client.connect().then(async () => {
      if (pids.length === 0) return client.query('select 1');
      const me = (client as unknown as ClientInternals).processID;
      return client.query<{ direct: boolean; p: number }>(LOST_SESSIONS, [pids, IDLE_MS / 1000, me ?? -1]);
    });
    work.catch(() => undefined);
    try {
      const r = (await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('probe timed out')), PROBE_TIMEOUT_MS)))])) as pg.QueryResult<{ direct?: boolean; p?: number }>;
      answered = true;
      return r.rows.filter((row) => row.direct === true).map((row) => Number(row.p));
    } catch (err) {
      // Refused by the server itself (too many connections, a pooler full, starting up): it answers,
      // so it is reachable, and the stalled statements are waiting, not lost.
      if (!fromServer(err)) throw err;
      return [];
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
