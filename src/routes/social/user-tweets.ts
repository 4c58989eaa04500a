import { Tweet } from '../../domain/models.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { PageQuery, paginated } from '../../http/schemas.js';
import { pageEnvelope, positionOf } from './list-page.js';
import { IdParams } from './params.js';

export function registerUserTweets(app: App, deps: Pick<Deps, 'cursors' | 'social'>): void {
  app.get(
    '/social/v1/users/:id/tweets',
    {
      schema: {
        operationId: 'getUserTweets',
        tags: ['social'],
        summary: "A user's tweets, newest first (createdAt, then id, descending).",
        params: IdParams,
        querystring: PageQuery,
        response: { 200: paginated(Tweet) },
      },
    },
    async (request) => {
      const list = `user_tweets:${request.params.id}`;
      const after = positionOf(deps.cursors, list, request.query.cursor);
      const page = await deps.social.userTweets(request.params.id, request.query.limit ?? 20, after);
      return pageEnvelope(deps.cursors, list, request, page);
    },
  );
}
