import type { Server } from 'node:http';
import type { Socket } from 'node:net';

// SERVER_CONNECTION_TIMEOUT_MS: a connection with no activity at all (nothing read, nothing written:
// a client that stopped reading a download, a request that never ends) is closed. Node's own
// socket timeout (Fastify's connectionTimeout) does it with a timer per socket that Node drops and
// makes anew twice a request (the keep-alive timeout once an answer is out, this one when the next
// request comes): 2,100 of the charged tweet's 102,800 instructions a request (2%, bench/instructions.ts,
// 2026-12-07). Here instead one timer sweeps the open connections every tenth of the timeout and
// compares each one's bytes read and written with the sweep before: one unchanged for the timeout
// is destroyed. So a silent connection closes between the timeout and 1.2 times it after its last
// byte, and a request costs nothing.

/** Sweeps per timeout: a silent connection is closed within (1 + 2 / SWEEPS) times the timeout. */
const SWEEPS = 10;

interface Seen {
  /** bytesRead + bytesWritten at the last sweep that saw them change (-1: not swept yet). */
  bytes: number;
  /** When that sweep ran (performance.now()). */
  at: number;
}

export interface IdleConnections {
  /** Connections closed for idling so far. */
  closed(): number;
  /** Stops the sweeps (the server's close). */
  stop(): void;
}

/** Not Node's `server.closeIdleConnections()`, which closes the kept-alive connections between requests at once. */
export function sweepIdleConnections(server: Server, idleMs: number): IdleConnections {
  const open = new Map<Socket, Seen>();
  let closed = 0;
  server.on('connection', (socket: Socket) => {
    open.set(socket, { bytes: -1, at: performance.now() });
    socket.once('close', () => open.delete(socket));
  });
  const sweep = (): void => {
    const t = performance.now();
    for (const [socket, seen] of open) {
      // Gone already, its close not yet emitted (and bytesWritten of a closed socket is undefined).
      if (socket.destroyed) {
        open.delete(socket);
        continue;
      }
      // bytesWritten counts what is queued too: a client that stops reading stops it growing once
      // the stream backs off, as a download does.
      const bytes = socket.bytesRead + socket.bytesWritten;
      if (bytes !== seen.bytes) {
        seen.bytes = bytes;
        seen.at = t;
      } else if (t - seen.at >= idleMs) {
        open.delete(socket);
        closed++;
        socket.destroy();
      }
    }
  };
  const timer = setInterval(sweep, Math.max(10, Math.round(idleMs / SWEEPS)));
  timer.unref();
  return { closed: () => closed, stop: () => clearInterval(timer) };
}
