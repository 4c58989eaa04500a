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

/** Counts and times one answered request; the label children are kept, not looked up per request. */
export function requestObserver(m: Metrics): (route: string, method: string, status: number, seconds: number) => void {
  const counters = new Map<string, ReturnType<Metrics['requests']['labels']>>();
  const timers = new Map<string, ReturnType<Metrics['duration']['labels']>>();
  return (route, method, status, seconds) => {
    const key = `${method} ${route}`;
    const ckey = `${key} ${status}`;
    let c = counters.get(ckey);
    if (!c) counters.set(ckey, (c = m.requests.labels({ route, method, status: String(status) })));
    c.inc();
    let t = timers.get(key);
    if (!t) timers.set(key, (t = m.duration.labels({ route, method })));
    t.observe(seconds);
  };
}
