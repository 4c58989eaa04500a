import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { registerCommunity } from './community.js';
import { registerRetweetedBy } from './retweeted-by.js';
import { registerTweet } from './tweet.js';
import { registerUserByUsername } from './user-by-username.js';
import { registerUserTweets } from './user-tweets.js';

export function registerSocialRoutes(app: App, deps: Deps): void {
  registerUserByUsername(app, deps);
  registerTweet(app, deps);
  registerRetweetedBy(app, deps);
  registerUserTweets(app, deps);
  registerCommunity(app, deps);
}
