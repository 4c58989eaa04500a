import type { Deps } from '../../src/wiring/deps.js';
import { TweetLookup } from '../../src/social/tweet-lookup.js';
import { SocialService } from '../../src/social/social-service.js';
import { DemoSource } from '../../src/sources/demo/demo-source.js';
import { demoSample, type DemoSampleResult } from '../../src/sources/demo/sample.js';
import type { DataSource } from '../../src/sources/types.js';

/** A harness tweak that puts `source` behind the gateway (and its social reads), on the given clock. */
export function useSource(source: DataSource, now: () => number = Date.now): (deps: Deps) => void {
  return (deps) => {
    deps.source = source;
    deps.social = new SocialService(deps.store.db, source, deps.tweetStore, deps.config.cache, now, new TweetLookup(deps.store, { freshSeconds: deps.config.cache.tweetSeconds, maxBytes: 2 ** 20, now }));
  };
}

/**
 * The demo network (seed 7) at a fixed noon, its sample ids, and the harness tweak that serves it:
 * for tests that walk every documented operation with ids that exist.
 */
export function demoNoon(): { clock: number; demo: DemoSource; sample: DemoSampleResult; tweak: (deps: Deps) => void } {
  const clock = Date.parse('2026-11-20T12:00:00.000Z');
  const demo = new DemoSource({ seed: 7, userCount: 200_000, now: () => new Date(clock) });
  return { clock, demo, sample: demoSample(demo, new Date(clock)), tweak: useSource(demo, () => clock) };
}

/** A documented path (`/social/v1/tweets/{id}`) with its parameters filled from the sample; others get a numeric id. */
export function samplePath(path: string, sample: DemoSampleResult): string {
  const ids: Record<string, string> = { id: sample.tweetIds[0]!, tweetId: sample.tweetIds[0]!, username: sample.usernames[0]!, userId: sample.userIds[0]!, address: '0x0000000000000000000000000000000000000001' };
  return path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? '1234567890');
}
