import { Type } from '@sinclair/typebox';
import { Plan } from '../../config/plans.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { single } from '../../http/schemas.js';

export function registerPlans(app: App, deps: Pick<Deps, 'config'>): void {
  app.get(
    '/api/v1/payments/plans',
    {
      schema: {
        operationId: 'listPlans',
        tags: ['account'],
        summary: 'The plans on offer.',
        description: 'Each plan’s price, monthly credits, watchlist size, requests a minute and number of keys.',
        response: { 200: single(Type.Object({ plans: Type.Array(Plan) }), 'The plans.') },
      },
    },
    async (request) => ({ data: { plans: deps.config.plans }, meta: { requestId: request.id, cached: false } }),
  );
}
