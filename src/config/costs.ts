import { ConfigError } from './env.js';

// Credits per successful call, by the route's operationId (docs/spec/contract.md, section 1). Unlisted routes cost 0.
export const defaultCosts: Readonly<Record<string, number>> = {
  generateExport: 0,
  addWatchlistBatch: 0,
  removeWatchlistBatch: 0,
  getWatchlistBatch: 0,
  getExportDownload: 0,
  getLatestExport: 0,
  getExport: 0,
  listExports: 0,
  listWatchlist: 0,
  getCrawlStatus: 0,
  getUserByUsername: 100,
  getTweet: 100,
  getRetweeters: 100,
  getUserTweets: 100,
  getCommunity: 100,
  getCreditsBalance: 0,
  createApiKey: 0,
  listApiKeys: 0,
  revokeApiKey: 0,
  listPlans: 0,
  listUsage: 0,
  getUsageSummary: 0,
  getAccount: 0,
  getWalletBalance: 100,
  echoHello: 0,
};

/** COSTS is a JSON object of operationId → credits that overrides the defaults, e.g. {"getTweet":50}. */
export function parseCosts(raw: string | undefined): Record<string, number> {
  const costs = { ...defaultCosts };
  if (!raw) return costs;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError('COSTS must be a JSON object such as {"getTweet":50}; it does not parse.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError('COSTS must be a JSON object such as {"getTweet":50}.');
  }
  for (const [op, cost] of Object.entries(parsed)) {
    if (!(op in defaultCosts)) {
      throw new ConfigError(`COSTS names ${op}, which is not an operation; known: ${Object.keys(defaultCosts).join(', ')}.`);
    }
    if (typeof cost !== 'number' || !Number.isInteger(cost) || cost < 0) {
      throw new ConfigError(`COSTS.${op} must be a non-negative integer; got ${JSON.stringify(cost)}.`);
    }
    costs[op] = cost;
  }
  return costs;
}
