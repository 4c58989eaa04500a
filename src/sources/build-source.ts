// Picks the data source from configuration, once, and wraps it in the shared resilience layer.
import type { Config } from '../config/config.js';
import type { Store } from '../db/connect.js';
import { DemoSource } from './demo/demo-source.js';
import { ResilientSource } from './resilience.js';
import { SimulatedConditions } from './simulated.js';
import type { DataSource } from './types.js';
import { XSource } from './x/x-source.js';

/**
 * `store` keeps what a source must remember (the Bluesky source's numeric ids). The Bluesky source is
 * loaded only when chosen: @atproto/api is 8 MB of heap that a demo or X deployment would carry for
 * nothing (and every megabyte of live heap lengthens each full garbage collection).
 */
export async function buildSource(config: Config, store: Store): Promise<DataSource> {
  const s = config.source;
  let inner: DataSource;
  switch (s.kind) {
    case 'demo': {
      const demo = new DemoSource({ seed: s.demo.seed, userCount: s.demo.userCount });
      const simulated = s.demo.latencyMs > 0 || s.demo.faultRate > 0 || s.demo.rateLimitPerMinute > 0;
      inner = simulated
        ? new SimulatedConditions(demo, {
            latencyMs: s.demo.latencyMs,
            faultRate: s.demo.faultRate,
            ...(s.demo.rateLimitPerMinute > 0 ? { rateLimitPerMinute: s.demo.rateLimitPerMinute } : {}),
          })
        : demo;
      // The demo answers in microseconds and never flakes unless told to: no retries to hide faults.
      return simulated ? new ResilientSource(inner, { timeoutMs: s.timeoutMs, maxAttempts: 1 }) : inner;
    }
    case 'x':
      inner = new XSource({ bearerToken: s.x.bearerToken!, baseUrl: s.x.baseUrl, timeoutMs: s.timeoutMs, dialect: s.x.dialect });
      break;
    case 'bluesky': {
      const [{ BlueskySource }, { StoreIdMap }] = await Promise.all([import('./bluesky/bluesky-source.js'), import('./bluesky/id-map.js')]);
      inner = new BlueskySource({ appViewUrl: s.bluesky.appViewUrl, idMap: new StoreIdMap(store.db), timeoutMs: s.timeoutMs });
      break;
    }
  }
  return new ResilientSource(inner, { timeoutMs: s.timeoutMs });
}
