import type { Deps } from '../../src/wiring/deps.js';
import { TweetLookup } from '../../src/social/tweet-lookup.js';
import { SocialService } from '../../src/social/social-service.js';
import type { DataSource } from '../../src/sources/types.js';

/** A harness tweak that puts `source` behind the gateway (and its social reads), on the given clock. */
export function useSource(source: DataSource, now: () => number = Date.now): (deps: Deps) => void {
  return (deps) => {
    deps.source = source;
    deps.social = new SocialService(deps.store.db, source, deps.tweetStore, deps.config.cache, now, new TweetLookup(deps.store, { freshSeconds: deps.config.cache.tweetSeconds, maxBytes: 2 ** 20, now }));
  };
}
