import { Community } from '../../domain/models.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { single } from '../../http/schemas.js';
import { IdParams, sourceErrors } from './params.js';

export function registerCommunity(app: App, deps: Pick<Deps, 'social'>): void {
  app.get(
    '/social/v1/communities/:id',
    {
      schema: {
        operationId: 'getCommunity',
        tags: ['social'],
        summary: 'A community by id.',
        description: 'Reads the community (its counts, rules and policies) from the configured data source.',
        params: IdParams,
        response: { 200: single(Community, 'The community.') },
      },
      config: { errors: sourceErrors },
    },
    async (request) => {
      const r = await deps.social.community(request.params.id);
      return { data: r.value, meta: { requestId: request.id, cached: r.cached } };
    },
  );
}
