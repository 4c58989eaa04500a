// Shared set-up of the bulk-export tests: the real app on a fresh store, the demo network on an
// injected clock (time passes when a test says so), and small request helpers.
import { defaultRetryPolicy } from '../../src/sources/resilience.js';
import type { Dialect } from '../../src/db/connect.js';
import { DemoSource } from '../../src/sources/demo/demo-source.js';
import { demoSample, type DemoSampleResult } from '../../src/sources/demo/sample.js';
import { startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { useSource } from '../helpers/social.js';

export const T0 = Date.parse('2025-06-02T12:00:00.000Z');
export const HOUR = 3_600_000;

export class TestClock {
  constructor(public ms: number) {}
  now = (): Date => new Date(this.ms);
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface BulkHarness {
  h: Harness;
  clock: TestClock;
  source: DemoSource;
  sample: DemoSampleResult;
}

export async function bulkHarness(backend: Dialect, env: Record<string, string> = {}): Promise<BulkHarness> {
  const clock = new TestClock(T0);
  const source = new DemoSource({ seed: 7, userCount: 2_000, now: clock.now });
  const h = await startHarness(backend, { CRAWL_INTERVAL_HOURS: '1', ...env }, (deps) => {
    useSource(source, () => clock.ms)(deps);
    deps.bulk.clock = clock.now;
    deps.bulk.retry = { ...defaultRetryPolicy, baseDelayMs: 5, maxDelayMs: 20 };
  });
  return { h, clock, source, sample: demoSample(source, clock.now()) };
}

export interface Res {
  statusCode: number;
  body: string;
  headers: Record<string, unknown>;
}

export function call(h: Harness, a: TestAccount, method: 'GET' | 'POST', url: string, payload?: unknown): Promise<Res> {
  return h.app.inject({ method, url, headers: { 'x-api-key': a.apiKey }, ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}) }) as Promise<Res>;
}

export const BASE = '/social/v1/bulk-export';
