import { Type } from '@sinclair/typebox';
import { Plan } from '../../config/plans.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { single } from '../../http/schemas.js';

export function registerPlans(app: App, deps: Pick<Deps, 'config'>): void {
  app.get(
    '/api/v1/payments/plans',
    { schema: { operationId: 'listPlans', tags: ['account'], summary: 'The plans on offer.', response: { 200: single(Type.Object({ plans: Type.Array(Plan) })) } } },
    async (request) => ({ data: { plans: deps.config.plans }, meta: { requestId: request.id, cached: false } }),
  );
}
