import { Tweet } from '../../domain/models.js';
import type { App, Deps } from '../../http/context.js';
import { single } from '../../http/schemas.js';
import { IdParams } from './params.js';

export function registerTweet(app: App, deps: Deps): void {
  app.get(
    '/social/v1/tweets/:id',
    { schema: { operationId: 'getTweet', tags: ['social'], summary: 'A tweet by id.', params: IdParams, response: { 200: single(Tweet) } } },
    async (request) => {
      const r = await deps.social.tweet(request.params.id);
      return { data: r.value, meta: { requestId: request.id, cached: r.cached } };
    },
  );
}
