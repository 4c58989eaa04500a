import type { Deps } from '../http/types.js';
import { LeaseLostError } from './lease.js';

/** What background jobs use of the program's dependencies (tools and benchmarks can build just this). */
export type JobDeps = Pick<Deps, 'config' | 'store' | 'bulk' | 'source' | 'tweetStore'>;

export const leaseMs = (deps: Pick<Deps, 'config'>): number => Math.round(deps.config.jobs.leaseSeconds * 1000);

/** The runner is stopping (not a lost lease, not a failure): the job should hand its row back. */
export function isStopping(parent: AbortSignal): boolean {
  return parent.aborted && !(parent.reason instanceof LeaseLostError);
}

/** The plan's watchlist limit for an account; an unknown plan gets the default plan's. */
export async function planWatchlistLimit(deps: JobDeps, accountId: string): Promise<number> {
  const acc = await deps.store.db.selectFrom('accounts').select('plan_id').where('id', '=', accountId).executeTakeFirst();
  const plans = deps.config.plans;
  const plan = plans.find((p) => p.id === acc?.plan_id) ?? plans.find((p) => p.id === deps.config.defaultPlanId) ?? plans[0]!;
  return plan.watchlistLimit;
}
