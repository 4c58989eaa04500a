// At most SERVER_MAX_CONNECTIONS open connections, and at most SERVER_MAX_CONNECTIONS_PER_ADDRESS
// from one client address (an IPv6 /64: address-key.ts). Without the second, one address could hold
// every connection and leave the gateway refusing everyone else: idle connections are closed after
// SERVER_HEADERS_TIMEOUT_MS, but a client that opens them again as fast keeps them all. A connection
// past either limit is answered in the error envelope and closed, not dropped unanswered as Node does
// past its own `maxConnections` (which the server no longer sets).
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { addressKey } from '../ratelimit/address-key.js';
import { rawAnswer } from './raw-errors.js';

export interface ConnectionCap {
  /** Connections refused since start, by the limit they met (for /metrics). */
  readonly refused: () => { address: number; server: number };
}

export interface ConnectionLimits {
  /** SERVER_MAX_CONNECTIONS. */
  total: number;
  /** SERVER_MAX_CONNECTIONS_PER_ADDRESS; 0: none. */
  perAddress: number;
}

export function capConnections(server: Server, limits: ConnectionLimits): ConnectionCap {
  const open = new Map<string, number>();
  let total = 0;
  const refused = { address: 0, server: 0 };
  server.on('connection', (socket: Socket) => {
    if (total >= limits.total) {
      refused.server++;
      refuse(socket, 503, 'Service Unavailable', {
        code: 'service_unavailable',
        message: `The gateway has as many connections open as it accepts (${limits.total}); retry in a second, or send more requests on each connection (keep-alive).`,
        details: { scope: 'connections', retryAfterSeconds: 1 },
      });
      return;
    }
    let key: string | undefined;
    if (limits.perAddress > 0) {
      key = addressKey(socket.remoteAddress);
      const n = open.get(key) ?? 0;
      if (n >= limits.perAddress) {
        refused.address++;
        refuse(socket, 429, 'Too Many Requests', {
          code: 'rate_limited',
          message: `Too many open connections from this address (at most ${limits.perAddress}); close some, or send more requests on each (keep-alive), and retry.`,
          details: { scope: 'connections', retryAfterSeconds: 1 },
        });
        return;
      }
      open.set(key, n + 1);
    }
    total++;
    socket.once('close', () => {
      total--;
      if (key === undefined) return;
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
  });
  return { refused: () => ({ ...refused }) };
}

/**
 * The answer in the error envelope, then the connection goes at once (not once the write is done):
 * no request sent on it is read, so none runs. libuv writes a small answer to a new connection's
 * empty queue at once, so it is out before the close; a client that already sent data may see a
 * reset instead.
 */
function refuse(socket: Socket, status: number, reason: string, error: { code: string; message: string; details: Record<string, unknown> }): void {
  socket.on('error', () => undefined);
  socket.write(rawAnswer(status, reason, error, { 'Retry-After': '1' }));
  socket.destroy();
}
