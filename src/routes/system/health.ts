import { sql } from 'kysely';
import { Type } from '@sinclair/typebox';
import { isStoreUnavailable } from '../../errors/store-unavailable.js';
import { metricsAccess, operatorAccess } from '../../http/metrics-access.js';
import type { App } from '../../http/types.js';
import { SourceError } from '../../sources/types.js';
import type { Deps } from '../../wiring/deps.js';

const Health = Type.Object({ status: Type.String() });
const NotReady = Type.Object({
  status: Type.String(),
  /**
   * The data source that cannot be reached, and why: the why only to those who may read /metrics
   * (it may name the source's host and port, which a public probe has no need of).
   */
  source: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String()),
});

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
      return reply.code(503).send({ status: 'store unavailable', ...(deps.store.outage?.cause ? { reason: deps.store.outage.cause } : {}) });
    }
    // A store that answers reads but refuses writes (full, read-only, locked by another process)
    // answers `select 1`: the outage report knows better, and its probe writes every second.
    const outage = deps.store.outage;
    if (outage?.down) return reply.code(503).send({ status: 'store unavailable', ...(outage.cause ? { reason: outage.cause } : {}) });
    try {
      await deps.rateLimiter.ping?.();
    } catch {
      return reply.code(503).send({ status: 'redis unavailable' });
    }
    // A cheap request to the upstream, its answer kept a few seconds (sources/resilience.ts).
    try {
      await deps.source.probe?.();
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      return reply.code(503).send({ status: 'source unavailable', source: deps.source.name, ...(isOperator(request) ? { reason: err.message } : {}) });
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
