import { Type } from '@sinclair/typebox';
import { Plan } from '../../config/plans.js';
import type { App, Deps } from '../../http/types.js';
import { single } from '../../http/schemas.js';

export function registerPlans(app: App, deps: Deps): void {
  app.get(
    '/api/v1/payments/plans',
    { schema: { operationId: 'listPlans', tags: ['account'], summary: 'The plans on offer.', response: { 200: single(Type.Object({ plans: Type.Array(Plan) })) } } },
    async (request) => ({ data: { plans: deps.config.plans }, meta: { requestId: request.id, cached: false } }),
  );
}
