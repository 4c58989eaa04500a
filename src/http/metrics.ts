import { Registry, collectDefaultMetrics } from 'prom-client';
import { Histogram, type Sample } from '../domain/histogram.js';
import type { MeterStats } from '../credits/meter-stats.js';
import type { RateLimitStats } from '../ratelimit/rate-limiter.js';
import { JOB_OUTCOMES, JobStats } from '../jobs/job-stats.js';
import type { Backlog } from '../jobs/job-backlog.js';

export interface Metrics {
  registry: Registry;
  /** sdg_http_requests_total and sdg_http_request_duration_seconds, per route and method. */
  http: RequestMetrics;
  /** sdg_credits_charged_total, per route. */
  creditsCharged: RouteCounter;
  /** sdg_jobs_*: what this process's worker and scheduler did (see watchJobs). */
  jobs: JobStats;
  /** sdg_export_download*: export files this process served from its object store's directory. */
  downloads: DownloadStats;
}

/** Export files served by the gateway (the local object store; S3's presigned links bypass it). */
export class DownloadStats {
  /** By answer (whole: 200, part: 206) and outcome (complete, or cut: the connection closed first). */
  readonly counts = { whole: { complete: 0, cut: 0 }, part: { complete: 0, cut: 0 } };
  /** Body bytes of the transfers that completed. */
  bytes = 0;

  ended(answer: 'whole' | 'part', complete: boolean, bytes: number): void {
    this.counts[answer][complete ? 'complete' : 'cut'] += 1;
    if (complete) this.bytes += bytes;
  }
}

/** A registry per app (not prom-client's global one), so tests can build several apps in one process. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const jobs = new JobStats();
  watchJobs(registry, jobs);
  const downloads = new DownloadStats();
  collected(registry, 'sdg_export_downloads_total', 'Export files this process served, by answer (whole: 200, part: 206 for a Range) and outcome (complete, or cut: the connection closed first)', 'counter', () =>
    (['whole', 'part'] as const).flatMap((answer) => (['complete', 'cut'] as const).map((outcome) => ({ labels: { answer, outcome }, value: downloads.counts[answer][outcome] }))),
  );
  collected(registry, 'sdg_export_download_bytes_total', 'Body bytes of the export downloads this process completed', 'counter', () => [{ labels: {}, value: downloads.bytes }]);
  return {
    registry,
    http: new RequestMetrics(registry),
    creditsCharged: new RouteCounter(registry, 'sdg_credits_charged_total', 'Credits charged for successful calls'),
    jobs,
    downloads,
  };
}

interface Series {
  route: string;
  method: string;
  /** Answers per status code. */
  statuses: Map<number, number>;
  time: Histogram;
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
    if (!s) byMethod.set(method, (s = { route, method, statuses: new Map(), time: new Histogram() }));
    s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
    s.time.observe(seconds);
  }

  private collect(kind: 'count' | 'time') {
    const values: Array<{ metricName?: string; labels: Record<string, string | number>; value: number }> = [];
    for (const s of [...this.series.values()].flatMap((m) => [...m.values()])) {
      if (kind === 'count') {
        for (const [status, n] of s.statuses) values.push({ labels: { route: s.route, method: s.method, status: String(status) }, value: n });
        continue;
      }
      values.push(...s.time.samples('sdg_http_request_duration_seconds', { route: s.route, method: s.method }));
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

type MetricType = 'counter' | 'gauge' | 'histogram';

/** Registers a metric whose samples are read from plain numbers when /metrics is read. */
function collected(registry: Registry, name: string, help: string, type: MetricType, values: () => Array<Omit<Sample, 'metricName'> | Sample>): void {
  registry.registerMetric({ name, help, type, get: () => ({ name, help, type, aggregator: 'sum', values: values() }) } as never);
}

/**
 * Postgres metering's own series (see MeterStats): whether calls wait for leases, how often this
 * process leases, asks and gives back, and what a group charge costs. Registered once per registry.
 */
export function watchMeter(registry: Registry, stats: MeterStats): void {
  if (registry.getSingleMetric('sdg_meter_lease_statements_total')) return;
  collected(registry, 'sdg_meter_lease_statements_total', 'Statements leasing a slice of an account balance, by purpose (ahead: the next slice while the current one lasts; call: one a call waited for) and outcome', 'counter', () =>
    (['ahead', 'call'] as const).flatMap((purpose) => (['granted', 'refused'] as const).map((outcome) => ({ labels: { purpose, outcome }, value: stats.leases[purpose][outcome] }))),
  );
  collected(registry, 'sdg_meter_lease_statement_seconds', 'Time of a statement leasing a slice', 'histogram', () => stats.leaseSeconds.samples('sdg_meter_lease_statement_seconds'));
  collected(registry, 'sdg_meter_calls_waited_total', 'Charged calls that found their slice short and waited for a lease statement', 'counter', () => [{ labels: {}, value: stats.callsWaited }]);
  collected(registry, 'sdg_meter_calls_refused_total', 'Charged calls refused for want of credits (402) after the other holders answered', 'counter', () => [{ labels: {}, value: stats.callsRefused }]);
  collected(registry, 'sdg_meter_asks_total', 'Times this process asked the other holders of an account to give back', 'counter', () => [{ labels: {}, value: stats.asks }]);
  collected(registry, 'sdg_meter_give_backs_total', 'Statements giving unheld leased credits back, by reason (asked by another process, idle for a second, closing)', 'counter', () =>
    (['asked', 'idle', 'close'] as const).map((reason) => ({ labels: { reason }, value: stats.givenBack[reason] })),
  );
  collected(registry, 'sdg_meter_leases_swept_total', 'Expired leases of stopped processes swept back into their accounts by this process', 'counter', () => [{ labels: {}, value: stats.leasesSwept }]);
  collected(registry, 'sdg_meter_leases_lost_total', "This process's leases found swept (it stalled beyond CREDIT_LEASE_SECONDS)", 'counter', () => [{ labels: {}, value: stats.leasesLost }]);
  collected(registry, 'sdg_meter_group_seconds', 'Time of a committed group charge statement', 'histogram', () => stats.groupSeconds.samples('sdg_meter_group_seconds'));
  collected(registry, 'sdg_meter_group_charges_total', 'Charges committed by group statements', 'counter', () => [{ labels: {}, value: stats.groupCharges }]);
  collected(registry, 'sdg_meter_group_deadlocks_total', "Group charge statements Postgres chose as a deadlock's victim (nothing written; sent again)", 'counter', () => [{ labels: {}, value: stats.groupDeadlocks }]);
  collected(registry, 'sdg_meter_group_failures_total', 'Group charge statements that failed (nothing written, or their answer lost: see sdg_meter_lost_answers_total)', 'counter', () => [{ labels: {}, value: stats.groupFailures }]);
  collected(registry, 'sdg_meter_lost_answers_total', "Charged calls whose charge's answer from Postgres was lost, by what the ledger then said (charged: answered so; not_charged: answered with the failure; unknown: Postgres could not be asked in time, answered with the failure and possibly charged)", 'counter', () =>
    (['charged', 'notCharged', 'unknown'] as const).map((k) => ({ labels: { outcome: k === 'notCharged' ? 'not_charged' : k }, value: stats.lostAnswers[k] })),
  );
  collected(registry, 'sdg_meter_lost_charge_refunds_total', "Calls answered 503 with details.maybeCharged (lost_answers outcome unknown) settled once Postgres answered: refunded (their charge had committed) or not_charged", 'counter', () => [
    { labels: { outcome: 'refunded' }, value: stats.lostCharges.refunded },
    { labels: { outcome: 'not_charged' }, value: stats.lostCharges.notCharged },
  ]);
  collected(registry, 'sdg_meter_lost_charges_pending', 'Calls answered 503 with details.maybeCharged not settled yet (Postgres has not answered since): each is refunded if it was charged', 'gauge', () => [{ labels: {}, value: stats.lostCharges.pending }]);
  collected(registry, 'sdg_meter_settlements_total', 'Times this process settled statements whose answer was lost (every lease given back, exactly, from the ledger)', 'counter', () => [{ labels: {}, value: stats.settled }]);
  collected(registry, 'sdg_meter_direct_charges_total', 'Charges whose lease was gone, taken from the available balance one by one', 'counter', () => [{ labels: {}, value: stats.directCharges }]);
  collected(registry, 'sdg_meter_leased_accounts', 'Accounts this process holds a lease on', 'gauge', () => [{ labels: {}, value: stats.now().accounts }]);
  collected(registry, 'sdg_meter_leased_unheld_credits', 'Credits leased by this process that no call holds', 'gauge', () => [{ labels: {}, value: stats.now().unheld }]);
}

/** Connections refused by connection-cap.ts: their address had SERVER_MAX_CONNECTIONS_PER_ADDRESS open, or the server SERVER_MAX_CONNECTIONS. */
export function watchConnectionCap(registry: Registry, cap: { refused: () => { address: number; server: number } }): void {
  if (registry.getSingleMetric('sdg_connections_refused_total')) return;
  collected(registry, 'sdg_connections_refused_total', 'Connections answered and closed before any request on them was read, by the limit they met: address (429: their client address, an IPv6 /64, had SERVER_MAX_CONNECTIONS_PER_ADDRESS open) or server (503: SERVER_MAX_CONNECTIONS were open)', 'counter', () => {
    const r = cap.refused();
    return [
      { labels: { limit: 'address' }, value: r.address },
      { labels: { limit: 'server' }, value: r.server },
    ];
  });
}

/**
 * The shared rate limiter's own series (see RateLimitStats): where requests were decided (from a
 * lease, in Redis, or in the process while Redis is down), its script calls and the tokens leased.
 */
export function watchRateLimiter(registry: Registry, stats: RateLimitStats): void {
  if (registry.getSingleMetric('sdg_rate_limit_decisions_total')) return;
  collected(registry, 'sdg_rate_limit_decisions_total', "Rate-limit decisions, by where they were made: from this process's lease of an account's tokens, in Redis, or in the process while Redis could not be reached", 'counter', () =>
    (['lease', 'redis', 'local'] as const).map((by) => ({ labels: { by }, value: stats.decided[by] })),
  );
  collected(registry, 'sdg_rate_limit_redis_calls_total', 'Script calls to Redis (one for the requests of an event-loop turn that no lease decided)', 'counter', () => [{ labels: {}, value: stats.calls }]);
  collected(registry, 'sdg_rate_limit_leased_tokens_total', 'Tokens of the shared buckets leased to this process', 'counter', () => [{ labels: {}, value: stats.leasedTokens }]);
}

/**
 * The job runners of this process (see JobStats): a process without the worker or scheduler role
 * shows no series of theirs.
 */
function watchJobs(registry: Registry, stats: JobStats): void {
  collected(registry, 'sdg_jobs_total', 'Job runs this process ended, by kind and outcome (finished; retrying: failed, back in the queue; gave_up: failed at its last attempt; taken_over: its lease went to another worker)', 'counter', () =>
    [...stats.outcomes].flatMap(([kind, by]) => JOB_OUTCOMES.map((outcome) => ({ labels: { kind, outcome }, value: by[outcome] }))),
  );
  collected(registry, 'sdg_job_duration_seconds', 'Time of a job run in this process, whatever its outcome', 'histogram', () =>
    [...stats.seconds].flatMap(([kind, h]) => h.samples('sdg_job_duration_seconds', { kind })),
  );
  collected(registry, 'sdg_jobs_running', 'Job runs in progress in this process', 'gauge', () => [...stats.running].map(([kind, n]) => ({ labels: { kind }, value: n })));
  collected(registry, 'sdg_task_failures_total', 'Runs of a periodic task (crawl-scheduler, retention, export-retention) that failed in this process', 'counter', () =>
    [...stats.taskFailures].map(([task, n]) => ({ labels: { task }, value: n })),
  );
}

/**
 * The store's job backlog (see readBacklog): the same figures from every process, read when /metrics
 * is read. While the store cannot be read the two series are left out rather than failing /metrics.
 */
/** How long /metrics waits for the store's backlog (Prometheus's default scrape timeout is 10 s). */
export const BACKLOG_READ_MS = 2_000;

export function watchBacklog(registry: Registry, read: () => Promise<Backlog[]>): void {
  if (registry.getSingleMetric('sdg_jobs_waiting')) return;
  // One read serves both series of one scrape.
  let pending: Promise<Backlog[] | undefined> | undefined;
  // At most BACKLOG_READ_MS: a store that does not answer (a partition) must not hold the scrape
  // past Prometheus's own timeout, and the series are then left out as for a failed read.
  const once = () =>
    (pending ??= Promise.race([read(), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), BACKLOG_READ_MS).unref())])
      .catch(() => undefined)
      .finally(() => setImmediate(() => (pending = undefined))));
  const series = (name: string, help: string, pick: (b: Backlog) => number) =>
    registry.registerMetric({
      name,
      help,
      type: 'gauge',
      get: async () => ({ name, help, type: 'gauge', aggregator: 'first', values: ((await once()) ?? []).map((b) => ({ labels: { kind: b.kind }, value: pick(b) })) }),
    } as never);
  series('sdg_jobs_waiting', "Jobs in the store waiting for a worker, by kind (the whole deployment's, from any process)", (b) => b.waiting);
  series('sdg_jobs_held', "Jobs in the store a worker holds, by kind (the whole deployment's; a dead worker's until its lease expires)", (b) => b.held);
}
