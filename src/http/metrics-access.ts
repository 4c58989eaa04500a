// Who may read /metrics: with METRICS_TOKEN set, whoever sends it as a bearer token; without it only
// callers on the loopback interface (a scraper on the same host or a sidecar), never the internet,
// nor a client a reverse proxy on the same host forwards (with TRUST_PROXY, which names it).
import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

const isLoopback = (ip: string | undefined) => ip !== undefined && (ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.'));

export function metricsAccess(token: string | undefined): (request: FastifyRequest) => void {
  const want = token === undefined ? undefined : digest(token);
  return (request) => {
    if (want) {
      const auth = request.headers.authorization ?? '';
      const m = /^Bearer (.+)$/i.exec(auth);
      // Digests of equal length, so the comparison takes the same time whatever was sent.
      if (m && timingSafeEqual(digest(m[1]!), want)) return;
      throw new AppError('missing_api_key', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.');
    }
    // Both the connection and the client it speaks for (request.ip, from X-Forwarded-For under
    // TRUST_PROXY): a reverse proxy on the same host connects from loopback for every client.
    if (isLoopback(request.socket.remoteAddress) && isLoopback(request.ip)) return;
    throw new AppError('missing_api_key', 'GET /metrics answers only on the loopback interface unless METRICS_TOKEN is set.');
  };
}
