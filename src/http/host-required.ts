import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';

// HTTP/1.1 requires Host (RFC 9112, section 3.2: a server answers 400 to a request without it).
// Node's own check answers an empty 400 outside the envelope, so the server turns it off (app.ts)
// and the gateway makes it where every request passes: each route's first hook and the not-found
// handler. HTTP/1.0 may omit Host; links then use PUBLIC_BASE_URL or the first allowed host.

/** The 400 for an HTTP/1.1 request without Host, or undefined. */
export function missingHost(request: FastifyRequest): AppError | undefined {
  const raw = request.raw;
  if (raw.headers.host !== undefined || raw.httpVersionMajor !== 1 || raw.httpVersionMinor !== 1) return undefined;
  return new AppError('invalid_request', 'The Host header is missing: HTTP/1.1 requires it.', { fields: [{ field: 'headers.host', message: 'is required' }] });
}
