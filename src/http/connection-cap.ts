// At most SERVER_MAX_CONNECTIONS_PER_ADDRESS open connections from one client address (an IPv6
// /64: address-key.ts). Without it one address could hold every one of SERVER_MAX_CONNECTIONS and
// leave the gateway refusing everyone else: idle connections are closed after
// SERVER_HEADERS_TIMEOUT_MS, but a client that opens them again as fast keeps them all.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { addressKey } from '../ratelimit/address-key.js';
import { rawAnswer } from './raw-errors.js';

export interface ConnectionCap {
  /** Connections refused since start (for /metrics). */
  readonly refused: () => number;
}

export function capConnectionsPerAddress(server: Server, max: number): ConnectionCap {
  const open = new Map<string, number>();
  let refused = 0;
  server.on('connection', (socket: Socket) => {
    const key = addressKey(socket.remoteAddress);
    const n = open.get(key) ?? 0;
    if (n >= max) {
      refused++;
      refuse(socket, max);
      return;
    }
    open.set(key, n + 1);
    socket.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
  });
  return { refused: () => refused };
}

/**
 * A 429 in the error envelope, then the connection goes at once (not once the write is done): no
 * request sent on it is read, so none runs. libuv writes a small answer to a new connection's
 * empty queue at once, so it is out before the close; a client that already sent data may see a
 * reset instead.
 */
function refuse(socket: Socket, max: number): void {
  socket.on('error', () => undefined);
  socket.write(
    rawAnswer(
      429,
      'Too Many Requests',
      {
        code: 'rate_limited',
        message: `Too many open connections from this address (at most ${max}); close some, or send more requests on each (keep-alive), and retry.`,
        details: { scope: 'connections', retryAfterSeconds: 1 },
      },
      { 'Retry-After': '1' },
    ),
  );
  socket.destroy();
}
