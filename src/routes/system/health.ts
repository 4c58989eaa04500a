import { sql } from 'kysely';
import { Type, type Static } from '@sinclair/typebox';
import type { ErrorCode } from '../../errors/app-error.js';
import { isStoreUnavailable } from '../../errors/store-unavailable.js';
import { metricsAccess, operatorAccess } from '../../http/metrics-access.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../http/types.js';
import { SourceError } from '../../sources/types.js';
import type { Deps } from '../../wiring/deps.js';

const Health = Type.Object({ status: Type.String() });
const NotReadyState = Type.Object({
  status: Type.String(),
  /**
   * The data source that cannot be reached, and why: the why only to those who may read /metrics
   * (it may name the source's host and port, which a public probe has no need of).
   */
  source: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
});
// What a probe reads (`status`, as before 2026-12-07) beside the contract's error envelope, which
// every non-2xx answer carries (contract section 13); `details` repeats the state.
const NotReady = Type.Object({
  ...NotReadyState.properties,
  error: Type.Object({ code: Type.String(), message: Type.String(), details: NotReadyState }),
  meta: Type.Object({ requestId: Type.String() }),
});

const notReadyMessage = {
  'store unavailable': ['service_unavailable', 'The gateway cannot use its storage right now: calls answer 503, uncharged, until it can.'],
  'redis unavailable': ['service_unavailable', 'The gateway cannot reach Redis: each process limits calls on its own until it is back.'],
  'source unavailable': ['upstream_unavailable', 'The data source cannot be reached: social calls answer 5xx, uncharged, until it is back.'],
} as const satisfies Record<string, readonly [ErrorCode, string]>;

function notReady(request: FastifyRequest, reply: FastifyReply, state: Static<typeof NotReadyState> & { status: keyof typeof notReadyMessage }) {
  const [code, message] = notReadyMessage[state.status];
  return reply.code(503).send({ ...state, error: { code, message, details: state }, meta: { requestId: request.id } });
}

export function registerHealthRoutes(app: App, deps: Pick<Deps, 'config' | 'metrics' | 'rateLimiter' | 'store' | 'source'>): void {
  const pub = { public: true };
  const isOperator = operatorAccess(deps.config.metricsToken);
  app.get('/healthz', { config: pub, schema: { hide: true, response: { 200: Health } } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { config: pub, schema: { hide: true, response: { 200: Health, 503: NotReady } } }, async (request, reply) => {
    try {
      await sql`select 1`.execute(deps.store.db);
    } catch (err) {
      // Reported (once, with its cause) as any other call's failure is: the poll itself logs nothing.
      if (isStoreUnavailable(err)) deps.store.outage?.failed(err, request.server.log);
      return notReady(request, reply, { status: 'store unavailable', ...(deps.store.outage?.cause ? { reason: deps.store.outage.cause } : {}) });
    }
    // A store that answers reads but refuses writes (full, read-only, locked by another process)
    // answers `select 1`: the outage report knows better, and its probe writes every second.
    const outage = deps.store.outage;
    if (outage?.down) return notReady(request, reply, { status: 'store unavailable', ...(outage.cause ? { reason: outage.cause } : {}) });
    try {
      await deps.rateLimiter.ping?.();
    } catch {
      return notReady(request, reply, { status: 'redis unavailable' });
    }
    // A cheap request to the upstream, its answer kept a few seconds (sources/resilience.ts).
    try {
      await deps.source.probe?.();
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      return notReady(request, reply, { status: 'source unavailable', source: deps.source.name, ...(isOperator(request) ? { reason: err.message } : {}) });
    }
    return { status: 'ready' };
  });
  app.get('/openapi.json', { config: pub, schema: { hide: true } }, async () => app.swagger());
  const mayReadMetrics = metricsAccess(deps.config.metricsToken);
  app.get('/metrics', { config: pub, schema: { hide: true } }, async (request, reply) => {
    mayReadMetrics(request);
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
