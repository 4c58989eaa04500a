// Picks the data source from configuration, once, and wraps it in the shared resilience layer
// (resilience.ts): every source, the demo included, gets the same timeouts, circuit breaker and
// readiness probe.
import { pino } from 'pino';
import type { Config } from '../config/config.js';
import type { Store } from '../db/connect.js';
import { DemoSource } from './demo/demo-source.js';
import { quickRetryPolicy, ResilientSource } from './resilience.js';
import { SimulatedConditions } from './simulated.js';
import type { DataSource, SourceLog } from './types.js';
import { XSource } from './x/x-source.js';

/**
 * `store` keeps what a source must remember (the Bluesky source's numeric ids). The Bluesky source is
 * loaded only when chosen: @atproto/api is 8 MB of heap that a demo or X deployment would carry for
 * nothing (and every megabyte of live heap lengthens each full garbage collection). `log` defaults to
 * a logger at LOG_LEVEL.
 */
export async function buildSource(
  config: Config,
  store: Store,
  log: SourceLog = pino({ level: config.logLevel }),
  // The demo network's clock (the scaling benchmark moves it with the service's); the wall clock otherwise.
  opts: { now?: () => Date } = {},
): Promise<DataSource> {
  const s = config.source;
  let inner: DataSource;
  switch (s.kind) {
    case 'demo': {
      const demo = new DemoSource({ seed: s.demo.seed, userCount: s.demo.userCount, ...(opts.now ? { now: opts.now } : {}) });
      const simulated = s.demo.latencyMs > 0 || s.demo.faultRate > 0 || s.demo.rateLimitPerMinute > 0;
      inner = simulated
        ? new SimulatedConditions(demo, {
            latencyMs: s.demo.latencyMs,
            faultRate: s.demo.faultRate,
            ...(s.demo.rateLimitPerMinute > 0 ? { rateLimitPerMinute: s.demo.rateLimitPerMinute } : {}),
          })
        : demo;
      // The demo never flakes unless told to: no retries to hide the faults it was told to make. The
      // plain demo computes its answers in-process and cannot hang: no timeout (see ResilienceOptions).
      return new ResilientSource(inner, { timeoutMs: simulated ? s.timeoutMs : 0, retry: { ...quickRetryPolicy, retries: 0 }, log });
    }
    case 'x':
      inner = new XSource({ bearerToken: s.x.bearerToken!, baseUrl: s.x.baseUrl, dialect: s.x.dialect, log });
      break;
    case 'bluesky': {
      const [{ BlueskySource }, { StoreIdMap }] = await Promise.all([import('./bluesky/bluesky-source.js'), import('./bluesky/id-map.js')]);
      inner = new BlueskySource({ appViewUrl: s.bluesky.appViewUrl, idMap: new StoreIdMap(store.db), walkBudgetMs: s.timeoutMs / 2 });
      break;
    }
  }
  return new ResilientSource(inner, { timeoutMs: s.timeoutMs, log });
}
