import { readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ConfigError } from './env.js';

export const Plan = Type.Object(
  {
    id: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]*$' }),
    name: Type.String({ minLength: 1 }),
    priceCents: Type.Integer({ minimum: 0 }),
    currency: Type.String({ pattern: '^[A-Z]{3}$' }),
    credits: Type.Integer({ minimum: 0 }),
    watchlistLimit: Type.Integer({ minimum: 0 }),
    rateLimitPerMinute: Type.Integer({ minimum: 1 }),
    keyLimit: Type.Optional(Type.Integer({ minimum: 1, description: 'Active (unrevoked) API keys an account may hold; 20 when not set.' })),
    description: Type.String(),
  },
  { additionalProperties: false, title: 'Plan' },
);
export type Plan = Static<typeof Plan>;

export const defaultPlans: Plan[] = [
  {
    id: 'free',
    name: 'Free',
    priceCents: 0,
    currency: 'USD',
    credits: 10_000,
    watchlistLimit: 25,
    rateLimitPerMinute: 600,
    keyLimit: 5,
    description: 'For trying the API: 100 profile or tweet reads, a small watchlist.',
  },
  {
    id: 'starter',
    name: 'Starter',
    priceCents: 2_900,
    currency: 'USD',
    credits: 1_000_000,
    watchlistLimit: 500,
    rateLimitPerMinute: 1_200,
    keyLimit: 20,
    description: '10,000 reads a month and a watchlist of 500 accounts.',
  },
  {
    id: 'pro',
    name: 'Pro',
    priceCents: 19_900,
    currency: 'USD',
    credits: 10_000_000,
    watchlistLimit: 5_000,
    rateLimitPerMinute: 6_000,
    keyLimit: 100,
    description: '100,000 reads a month, a watchlist of 5,000 accounts and higher rate limits.',
  },
];

/**
 * The plan whose limits apply to an account: its own, or, when the deployment's plans no longer have
 * it (a PLANS_FILE that dropped it), the default plan's. Every limit (rate, watchlist, keys) reads it,
 * so an account on a dropped plan is never between two plans.
 */
export function planOf(config: { plans: readonly Plan[]; defaultPlanId: string }, planId: string | undefined): Plan {
  return config.plans.find((p) => p.id === planId) ?? config.plans.find((p) => p.id === config.defaultPlanId) ?? config.plans[0]!;
}

/** Plans come from PLANS_FILE (a JSON array of plans) when set, else the defaults. */
export function loadPlans(file: string | undefined): Plan[] {
  if (!file) return defaultPlans;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`PLANS_FILE ${file} could not be read as JSON: ${(err as Error).message}`);
  }
  const schema = Type.Array(Plan, { minItems: 1 });
  if (!Value.Check(schema, parsed)) {
    const first = Value.Errors(schema, parsed).First();
    throw new ConfigError(`PLANS_FILE ${file} is not a valid plan list: ${first?.path || '/'} ${first?.message ?? ''}`);
  }
  const ids = new Set<string>();
  for (const p of parsed) {
    if (ids.has(p.id)) throw new ConfigError(`PLANS_FILE ${file} lists plan id ${p.id} twice.`);
    ids.add(p.id);
  }
  return parsed;
}
