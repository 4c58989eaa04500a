// Realistic tweets for the benchmarks, from the demo network: real shapes and text lengths.
import type { Tweet } from '../src/domain/models.js';
import { DemoSource } from '../src/sources/demo/demo-source.js';
import { isActive } from '../src/sources/demo/users.js';

export const BENCH_NOW = new Date('2025-06-02T12:00:00.000Z');

/** `n` distinct tweets of the demo network's active accounts, newest first per account. */
export async function demoTweets(n: number): Promise<Tweet[]> {
  const source = new DemoSource({ seed: 3, userCount: 200_000, now: () => BENCH_NOW });
  const out: Tweet[] = [];
  for (let i = 0; out.length < n && i < source.net.userCount; i++) {
    if (!isActive(source.net, i)) continue;
    const id = source.net.userIds.encode(i);
    let after: string | undefined;
    for (let page = 0; page < 5 && out.length < n; page++) {
      const p = await source.getUserTweets(id, { limit: 100, ...(after ? { after } : {}) }).catch(() => undefined);
      if (!p) break;
      out.push(...p.items.slice(0, n - out.length));
      if (!p.next) break;
      after = p.next;
    }
  }
  return out;
}

export const mb = (bytes: number): number => Math.round((bytes / 1_048_576) * 10) / 10;

/** Peak resident set size while `fn` runs, sampled every 20 ms. */
export async function withPeakRss<T>(fn: () => Promise<T>): Promise<{ result: T; peakRss: number; baselineRss: number }> {
  const baselineRss = process.memoryUsage().rss;
  let peakRss = baselineRss;
  const timer = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 20);
  try {
    const result = await fn();
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    return { result, peakRss, baselineRss };
  } finally {
    clearInterval(timer);
  }
}
