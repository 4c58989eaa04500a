import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  requests: Counter<'route' | 'method' | 'status'>;
  duration: Histogram<'route' | 'method'>;
  creditsCharged: Counter<'route'>;
}

/** A registry per app (not prom-client's global one), so tests can build several apps in one process. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({ name: 'sdg_http_requests_total', help: 'HTTP requests answered', labelNames: ['route', 'method', 'status'], registers: [registry] }),
    duration: new Histogram({
      name: 'sdg_http_request_duration_seconds',
      help: 'Time to answer an HTTP request',
      labelNames: ['route', 'method'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [registry],
    }),
    creditsCharged: new Counter({ name: 'sdg_credits_charged_total', help: 'Credits charged for successful calls', labelNames: ['route'], registers: [registry] }),
  };
}
