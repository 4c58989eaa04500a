import { Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  /** sdg_http_requests_total and sdg_http_request_duration_seconds, per route and method. */
  http: RequestMetrics;
  /** sdg_credits_charged_total, per route. */
  creditsCharged: RouteCounter;
}

/** A registry per app (not prom-client's global one), so tests can build several apps in one process. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    http: new RequestMetrics(registry),
    creditsCharged: new RouteCounter(registry, 'sdg_credits_charged_total', 'Credits charged for successful calls'),
  };
}

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

interface Series {
  route: string;
  method: string;
  /** Answers per status code. */
  statuses: Map<number, number>;
  /** Per bucket (not cumulative; the last one is +Inf). */
  buckets: Float64Array;
  sum: number;
  count: number;
}

// Every answered request is counted and timed. prom-client's labelled observe() hashes its label
// object on each call (about a microsecond a request, most of a small request's budget), so the
// counts live in plain per-route records and are turned into prom-client's metric format when
// /metrics is read. Exposed as the same two series a Counter and a Histogram would give.
export class RequestMetrics {
  /** By route, then method: no key to build per request. */
  private readonly series = new Map<string, Map<string, Series>>();

  constructor(registry: Registry) {
    const get = (kind: 'count' | 'time') => () => this.collect(kind);
    registry.registerMetric({ name: 'sdg_http_requests_total', help: 'HTTP requests answered', type: 'counter', get: get('count') } as never);
    registry.registerMetric({ name: 'sdg_http_request_duration_seconds', help: 'Time to answer an HTTP request', type: 'histogram', get: get('time') } as never);
  }

  observe(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.series.get(route);
    if (!byMethod) this.series.set(route, (byMethod = new Map()));
    let s = byMethod.get(method);
    if (!s) byMethod.set(method, (s = { route, method, statuses: new Map(), buckets: new Float64Array(BUCKETS.length + 1), sum: 0, count: 0 }));
    s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]!) i++;
    s.buckets[i]! += 1;
    s.sum += seconds;
    s.count += 1;
  }

  private collect(kind: 'count' | 'time') {
    const values: Array<{ metricName?: string; labels: Record<string, string | number>; value: number }> = [];
    for (const s of [...this.series.values()].flatMap((m) => [...m.values()])) {
      if (kind === 'count') {
        for (const [status, n] of s.statuses) values.push({ labels: { route: s.route, method: s.method, status: String(status) }, value: n });
        continue;
      }
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        values.push({ metricName: 'sdg_http_request_duration_seconds_bucket', labels: { le, route: s.route, method: s.method }, value: cumulative });
      });
      values.push({ metricName: 'sdg_http_request_duration_seconds_bucket', labels: { le: '+Inf', route: s.route, method: s.method }, value: s.count });
      values.push({ metricName: 'sdg_http_request_duration_seconds_sum', labels: { route: s.route, method: s.method }, value: s.sum });
      values.push({ metricName: 'sdg_http_request_duration_seconds_count', labels: { route: s.route, method: s.method }, value: s.count });
    }
    const histogram = kind === 'time';
    return {
      name: histogram ? 'sdg_http_request_duration_seconds' : 'sdg_http_requests_total',
      help: histogram ? 'Time to answer an HTTP request' : 'HTTP requests answered',
      type: histogram ? 'histogram' : 'counter',
      values,
      aggregator: 'sum',
    };
  }
}

/** A counter per route, kept as plain numbers for the same reason as RequestMetrics. */
export class RouteCounter {
  private readonly counts = new Map<string, number>();

  constructor(registry: Registry, name: string, help: string) {
    const get = () => ({ name, help, type: 'counter', aggregator: 'sum', values: [...this.counts].map(([route, value]) => ({ labels: { route }, value })) });
    registry.registerMetric({ name, help, type: 'counter', get } as never);
  }

  inc(route: string, by: number): void {
    this.counts.set(route, (this.counts.get(route) ?? 0) + by);
  }
}
