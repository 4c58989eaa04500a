/** Prometheus's default-like buckets for durations in seconds (the last, +Inf, is implicit). */
export const SECONDS_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** One sample line of a histogram as prom-client's collectors take it. */
export interface Sample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/**
 * Counts of observations in fixed buckets, kept as plain numbers: observing is a short loop and
 * three additions, no label hashing (prom-client's labelled observe() hashes its labels per call).
 * Turned into the histogram's sample lines only when /metrics is read.
 */
export class Histogram {
  /** Per bucket, not cumulative; the last one is +Inf. */
  private readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[] = SECONDS_BUCKETS) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }

  /** The `_bucket` (cumulative), `_sum` and `_count` lines of metric `name`. */
  samples(name: string, labels: Record<string, string | number> = {}): Sample[] {
    const out: Sample[] = [];
    let cumulative = 0;
    this.bounds.forEach((le, i) => {
      cumulative += this.counts[i]!;
      out.push({ metricName: `${name}_bucket`, labels: { le, ...labels }, value: cumulative });
    });
    out.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', ...labels }, value: this.count });
    out.push({ metricName: `${name}_sum`, labels, value: this.sum });
    out.push({ metricName: `${name}_count`, labels, value: this.count });
    return out;
  }
}
