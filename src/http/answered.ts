import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../wiring/deps.js';
import { logOf } from './logging.js';

// Counts, times and (for failures) logs one answer. Called exactly once per request, where the
// answer is made: the metering wrapper, the error and not-found handlers, and an onResponse hook on
// public routes only. A global onResponse hook would do the same for every request at the cost of
// Fastify's hook runner on the hot path.
export function answered(deps: Pick<Deps, 'metrics'>, request: FastifyRequest, reply: FastifyReply, reported = false): void {
  const route = request.routeUrl ?? 'unknown';
  const status = reply.statusCode;
  // Unknown routes have no hook to start the clock: they are timed as instant.
  const ms = request.startedAt === undefined ? 0 : performance.now() - request.startedAt;
  deps.metrics.http.observe(route, request.method, status, ms / 1000);
  const log = logOf(request);
  // `reported`: a failure already logged another way (a storage outage, once for all its calls).
  if (status >= 500 && !reported) log.warn({ requestId: request.id, status, route }, 'request failed');
  else if (log.isLevelEnabled('debug')) log.debug({ requestId: request.id, status, route, ms }, 'request completed');
}
