// Postgres cut off by a network partition (packets dropped, no reset) leaves a statement sent on an
// open connection without an answer, and the kernel reports nothing for many minutes: every keyed
// call, /readyz and the jobs waited for as long as the partition lasted. A statement timeout cannot
// tell that from a slow statement (a migration, a lock waited for), and pg's query_timeout leaves the
// client busy. So: a connection whose statement has had no byte of answer for STALL_MS is a
// suspect; the server is then asked, on a connection of its own, what the suspects' sessions are
// doing. If it cannot be reached, the suspects are closed, and their statements fail as on any lost
// connection (a 503; a charge whose outcome is unknown is settled as lost-answers.ts does). If it
// answers, a suspect whose session is running a statement is merely slow: left alone. One silent
// for LOST_MS whose session is gone, or idle and still silent once that is seen, lost its way there
// or back (a NAT or firewall that forgot the connection, while new ones pass): its session is ended
// (a transaction it had open would hold its locks until the server's own keepalive noticed, hours
// by default) and it is closed. Through a pooler (PgBouncer) a connection's process id is not its
// server session's: the probe sees that (its own id differs from pg_backend_pid()) and then only
// tells reachable from not.
import type { Duplex } from 'node:stream';
import type pg from 'pg';

export const STALL_MS = 5_000;
/** The probe's connect and questions together. */
export const PROBE_TIMEOUT_MS = 3_000;
/**
 * How long a suspect must have been silent before a server that answers can have it taken for lost
 * (its session gone or idle): twice the stall, so that a statement merely slow to upload (a large
 * parameter on a slow link, which shows its session idle until the whole message is in) is not.
 */
export const LOST_MS = 2 * STALL_MS;
/** LOST_MS as a multiple of the stall, so that a guard given a shorter stall (the tests') keeps the ratio. */
const LOST_STALLS = LOST_MS / STALL_MS;
/** How long a suspect's session must have been idle to be taken as lost: an answer sent is read well within it. */
export const IDLE_MS = 2_000;
/** A session is the connection's only if the server's age for it and ours differ by less than this (a connection takes up to 10 s to make; a reused pid is another session). */
const SAME_SESSION_S = 15;

interface Watched {
  /** The last statement sent or byte received (performance.now()). */
  last: number;
  /** When the connection was made (performance.now()). */
  since: number;
}

// pg's Client keeps these as plain fields.
interface ClientInternals {
  activeQuery?: unknown;
  connection?: { stream?: Duplex };
  /** The server session's process id, from its BackendKeyData (through a pooler, the pooler's). */
  processID?: number | null;
}

/** A stalled connection's session, as the server sees it. */
export interface SessionSeen {
  pid: number;
  /** Not there, another role's, or not as old as the connection: the session is gone (its pid perhaps reused). */
  gone: boolean;
  /** Idle (in a transaction or not) for IDLE_MS: it runs nothing. */
  idle: boolean;
}

/** A stalled connection to ask about: its session's process id and the connection's age in seconds. */
export interface Asked {
  pid: number;
  ageS: number;
}

/**
 * Opens a connection of its own and asks the server about the sessions `asked`. `decide` gets what
 * it saw (nothing when the process ids cannot be trusted: a pooler) and names the sessions to end;
 * those still idle are ended on the same connection. Rejects if the server cannot be reached in
 * PROBE_TIMEOUT_MS.
 */
export type Probe = (asked: Asked[], decide: (seen: SessionSeen[]) => number[]) => Promise<void>;

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
      const w: Watched = { last: performance.now(), since: performance.now() };
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

  /** Connections with a statement under way and nothing heard for `ms`. */
  private suspects(now: number, ms = this.stallMs): pg.PoolClient[] {
    const out: pg.PoolClient[] = [];
    for (const [client, w] of this.watched) if ((client as unknown as ClientInternals).activeQuery && now - w.last >= ms) out.push(client);
    return out;
  }

  private async check(): Promise<void> {
    const now = performance.now();
    // One probe at a time, and at most one each stallMs while a slow statement runs on a live server.
    if (this.probing || now - this.lastProbe < this.stallMs || this.suspects(now).length === 0) return;
    this.probing = true;
    this.lastProbe = now;
    const internals = (c: pg.PoolClient) => c as unknown as ClientInternals;
    // Those a live server may have lost: silent for LOST_MS, and with nothing left in Node's buffer
    // to write (a statement still being handed to the kernel is moving).
    const lostable = this.suspects(now, LOST_STALLS * this.stallMs).filter((c) => typeof internals(c).processID === 'number' && !internals(c).connection?.stream?.writableLength);
    const asked = lostable.map((c) => ({ pid: internals(c).processID!, ageS: (now - this.watched.get(c)!.since) / 1000 }));
    let lost: pg.PoolClient[] = [];
    try {
      await this.probe(asked, (seen) => {
        // Still silent since they were asked about (an answer that came meanwhile clears one), and
        // their session gone or idle: lost on the way. Only a session that is still there is ended.
        const still = new Set(this.suspects(performance.now(), LOST_STALLS * this.stallMs));
        const byPid = new Map(seen.map((x) => [x.pid, x]));
        lost = lostable.filter((c) => {
          const x = byPid.get(internals(c).processID!);
          return still.has(c) && x !== undefined && (x.gone || x.idle);
        });
        return lost.map((c) => byPid.get(internals(c).processID!)!).filter((x) => !x.gone).map((x) => x.pid);
      });
    } catch {
      // Still suspects once the probe has failed: closed, which fails their statements. ETIMEDOUT:
      // a network failure, so the statement's caller sees the store unavailable (a 503).
      this.cut(this.suspects(performance.now()), 'ETIMEDOUT', 'and it cannot be reached');
      return;
    } finally {
      this.probing = false;
    }
    this.cut(lost, 'ECONNRESET', 'and the server, which answers new connections, runs no statement of this connection: the connection was lost on the way');
  }

  private cut(clients: pg.PoolClient[], code: string, why: string): void {
    const error = () => Object.assign(new Error(`No answer from Postgres for ${this.stallMs / 1000} s or more, ${why}.`), { code });
    for (const client of clients) (client as unknown as ClientInternals).connection?.stream?.destroy(error());
    if (clients.length > 0) this.onCut(clients.length);
  }
}

// What the server sees of the sessions asked about. "Ours" by the session's login role
// (session_user: a role set at login changes current_user, not usename) and by its age against the
// connection's, so that a pid reused by another session (after a restart) is not taken for it.
const SEEN_SESSIONS = `
  select pg_backend_pid() = $3 as direct, asked.pid,
    case when a.pid is null or a.usename is distinct from session_user then true
         when a.backend_start is null then false -- not ours to see: left alone
         else abs(extract(epoch from now() - a.backend_start) - asked.age) >= ${SAME_SESSION_S} end as gone,
    coalesce(a.state in ('idle', 'idle in transaction', 'idle in transaction (aborted)') and a.state_change < now() - make_interval(secs => $4), false) as idle
  from unnest($1::int[], $2::float8[]) as asked(pid, age)
  left join pg_stat_activity a on a.pid = asked.pid`;

// Ended only if still this role's and still idle, in the statement that ends it.
const END_SESSIONS = `
  select pg_terminate_backend(a.pid) from pg_stat_activity a
   where a.pid = any($1::int[]) and a.usename = session_user
     and a.state in ('idle', 'idle in transaction', 'idle in transaction (aborted)') and a.state_change < now() - make_interval(secs => $2)`;

/** The probe: a client of its own, connect and ask within PROBE_TIMEOUT_MS, then closed whatever happened. */
export function serverProbe(Client: typeof pg.Client, connectionString: string): Probe {
  return async (asked, decide) => {
    const client = new Client({ connectionString, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
    client.on('error', () => undefined);
    let timer: NodeJS.Timeout | undefined;
    let answered = false;
    const work = client.connect().then(async () => {
      if (asked.length === 0) {
        await client.query('select 1');
        return;
      }
      // As the login role: a role taken at login (ALTER ROLE ... SET role) could neither see the
      // sessions' state nor end them, both allowed for the role a session logged in as. For this
      // transaction only: through a transaction pooler a session-wide SET would stay on the server
      // connection for its next client.
      await client.query('begin');
      await client.query('set local role none');
      const me = (client as unknown as ClientInternals).processID ?? -1;
      const r = await client.query<{ direct: boolean; pid: number; gone: boolean; idle: boolean }>(SEEN_SESSIONS, [asked.map((a) => a.pid), asked.map((a) => a.ageS), me, IDLE_MS / 1000]);
      // Through a pooler, no process id is a session's: nothing seen.
      const seen = r.rows.filter((row) => row.direct).map((row) => ({ pid: Number(row.pid), gone: row.gone, idle: row.idle }));
      // Only sessions it saw, and saw as this connection's.
      const end = decide(seen).filter((pid) => seen.some((x) => x.pid === pid && !x.gone));
      if (end.length > 0) await client.query(END_SESSIONS, [end, IDLE_MS / 1000]);
      await client.query('commit');
    });
    work.catch(() => undefined);
    try {
      await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('probe timed out')), PROBE_TIMEOUT_MS)))]);
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
