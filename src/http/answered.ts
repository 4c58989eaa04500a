import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from './context.js';

// Counts, times and (for failures) logs one answer. Called exactly once per request, where the
// answer is made: the metering wrapper, the error and not-found handlers, and an onResponse hook on
// public routes only. A global onResponse hook would do the same for every request at the cost of
// Fastify's hook runner on the hot path.
export function answered(deps: Deps, request: FastifyRequest, reply: FastifyReply): void {
  const route = request.routeUrl ?? 'unknown';
  const status = reply.statusCode;
  const ms = reply.elapsedTime;
  deps.metrics.http.observe(route, request.method, status, ms / 1000);
  if (status >= 500) request.log.warn({ status, route }, 'request failed');
  else request.log.debug({ status, route, ms }, 'request completed');
}
