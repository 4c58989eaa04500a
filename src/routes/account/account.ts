// The calling account at a glance (what the dashboard's overview shows): plan, effective rate limit, balance.
import { Type } from '@sinclair/typebox';
import { getAccount } from '../../accounts/accounts-repo.js';
import { AppError } from '../../errors/app-error.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { single } from '../../http/schemas.js';

export const AccountView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  planId: Type.String(),
  planName: Type.Union([Type.String(), Type.Null()], { description: 'null when the plan is no longer configured' }),
  rateLimitPerMinute: Type.Integer({ description: "requests a minute, shared by all of the account's keys: the account's own figure, else its plan's" }),
  balance: Type.Integer(),
  createdAt: Type.String({ format: 'date-time' }),
}, { title: 'Account' });

export function registerAccount(app: App, deps: Pick<Deps, 'config' | 'store'>): void {
  app.get(
    '/api/v1/account',
    {
      schema: {
        operationId: 'getAccount',
        tags: ['account'],
        summary: 'The calling account: plan, rate limit and balance.',
        description: 'The account the X-API-Key belongs to: its name, plan, the rate limit that applies to each of its keys and to the account as a whole (requests a minute), and its balance in credits.',
        response: { 200: single(AccountView, 'The calling account.') },
      },
      config: { errors: ['not_found'] },
    },
    async (request) => {
      const a = await getAccount(deps.store.db, request.auth!.accountId);
      if (!a) throw new AppError('not_found', 'This account no longer exists.');
      const plan = deps.config.plans.find((p) => p.id === a.plan_id);
      return {
        data: {
          id: a.id,
          name: a.name,
          planId: a.plan_id,
          planName: plan?.name ?? null,
          rateLimitPerMinute: request.auth!.rateLimitPerMinute,
          balance: Number(a.balance),
          createdAt: a.created_at,
        },
        meta: { requestId: request.id, cached: false },
      };
    },
  );
}
