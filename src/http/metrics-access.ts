// Who may read /metrics: with METRICS_TOKEN set, whoever sends it as a bearer token; without it only
// callers on the loopback interface (a scraper on the same host or a sidecar), never the internet,
// nor a client a reverse proxy on the same host forwards (with TRUST_PROXY, which names it).
import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

const isLoopback = (ip: string | undefined) => ip !== undefined && (ip === '::1' || ip.startsWith('127.') || ip.startsWith('::ffff:127.'));

/** Whether the request may read what is for the operator (/metrics, /readyz's reasons): the rule above. */
export function operatorAccess(token: string | undefined): (request: FastifyRequest) => boolean {
  const want = token === undefined ? undefined : digest(token);
  return (request) => {
    if (want) {
      const m = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '');
      // Digests of equal length, so the comparison takes the same time whatever was sent.
      return m !== null && timingSafeEqual(digest(m[1]!), want);
    }
    // Both the connection and the client it speaks for (request.ip, from X-Forwarded-For under
    // TRUST_PROXY): a reverse proxy on the same host connects from loopback for every client.
    return isLoopback(request.socket.remoteAddress) && isLoopback(request.ip);
  };
}

export function metricsAccess(token: string | undefined): (request: FastifyRequest) => void {
  const allowed = operatorAccess(token);
  return (request) => {
    if (allowed(request)) return;
    throw new AppError(
      'missing_api_key',
      token === undefined ? 'GET /metrics answers only on the loopback interface unless METRICS_TOKEN is set.' : 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.',
    );
  };
}
