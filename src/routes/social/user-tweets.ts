import { Type } from '@sinclair/typebox';
import { Tweet } from '../../domain/models.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { NumericId, PageQuery, paginated } from '../../http/schemas.js';
import { parseTimelineFilters } from '../../social/timeline-filters.js';
import { pageEnvelope } from './list-page.js';
import { IdParams, protectedErrors } from './params.js';
import { carriedFilters, timelineRead } from './timeline-cursor.js';

// The times are checked by the handler (timeline-filters.ts), so that the answer says what form is wanted.
const Instant = (description: string, example: string) => Type.String({ minLength: 1, maxLength: 64, description, examples: [example] });

export const UserTweetsQuery = Type.Object(
  {
    ...PageQuery.properties,
    startTime: Type.Optional(Instant('only tweets created at or after this instant; ISO 8601 with an offset or Z', '2025-01-31T00:00:00Z')),
    endTime: Type.Optional(Instant('only tweets created before this instant; ISO 8601 with an offset or Z; after startTime', '2025-02-01T00:00:00Z')),
    sinceId: Type.Optional(Type.String({ pattern: NumericId.pattern, description: 'only tweets with an id greater than this (numeric)', examples: ['1885000000000000000'] })),
    untilId: Type.Optional(
      Type.String({ pattern: NumericId.pattern, description: 'only tweets with an id less than this (numeric); greater than sinceId', examples: ['1886000000000000000'] }),
    ),
  },
  { additionalProperties: false },
);

export function registerUserTweets(app: App, deps: Pick<Deps, 'cursors' | 'social'>): void {
  app.get(
    '/social/v1/users/:id/tweets',
    {
      schema: {
        operationId: 'getUserTweets',
        tags: ['social'],
        summary: "A user's tweets, newest first (createdAt, then id, descending).",
        description:
          'One page of the user’s tweets; each page is one call and costs the same. startTime (inclusive), endTime (exclusive), sinceId and untilId (both exclusive) narrow the list, and are applied by the data source: a filtered list costs the pages of its own tweets only. A nextCursor carries the filters it was issued with: send them again or leave them out; other filters with it are 400 invalid_cursor.',
        params: IdParams,
        querystring: UserTweetsQuery,
        response: { 200: paginated(Tweet, 'One page of the user’s tweets.') },
      },
      config: { errors: [...protectedErrors, 'invalid_cursor'] },
    },
    async (request) => {
      const asked = parseTimelineFilters(request.query);
      const list = `user_tweets:${request.params.id}`;
      const { after, filters } = timelineRead(deps.cursors, list, request.query.cursor, asked);
      const page = await deps.social.userTweets(request.params.id, request.query.limit ?? 20, after, filters);
      return pageEnvelope(deps.cursors, list, request, page, carriedFilters(filters));
    },
  );
}
