import type { Static } from '@sinclair/typebox';
import { Tweet } from '../../domain/models.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { asPayload } from '../../http/json-text.js';
import { single } from '../../http/schemas.js';
import type { TweetRead } from '../../social/social-service.js';
import { IdParams, protectedErrors } from './params.js';

// A stored tweet is answered with the JSON it was stored as: the hot path parses and serializes
// nothing (the JSON text is checked against the schema in tests).
type TweetAnswer = Static<ReturnType<typeof single<typeof Tweet>>>;
// Beyond ASCII, the answer is joined from bytes: the stored JSON's, made once per copy read (StoredTweetJson.utf8).
const DATA = Buffer.from('{"data":');
// Request ids are the gateway's own (ids.ts: a prefix, base64url and hex): nothing in them to escape.
const meta = (requestId: string) => `,"meta":{"requestId":"${requestId}","cached":true}}`;
const answer = (requestId: string, r: TweetRead): TweetAnswer => {
  if (!r.cached) return { data: r.value, meta: { requestId, cached: false } };
  if (r.utf8) return asPayload<TweetAnswer>(Buffer.concat([DATA, r.utf8, Buffer.from(meta(requestId))]));
  // ASCII through and through: its length is its length in UTF-8.
  const text = `{"data":${r.json}${meta(requestId)}`;
  return asPayload<TweetAnswer>(text, text.length);
};

export function registerTweet(app: App, deps: Pick<Deps, 'social'>): void {
  app.get(
    '/social/v1/tweets/:id',
    {
      schema: {
        operationId: 'getTweet',
        tags: ['social'],
        summary: 'A tweet by id.',
        description: 'Reads the tweet from the gateway’s store when it holds it (meta.cached true), else from the data source. A tweet of a protected account is 403 protected_account.',
        params: IdParams,
        response: { 200: single(Tweet, 'The tweet.') },
      },
      config: { errors: protectedErrors },
    },
    (request) => {
      // No promise when a fresh stored tweet is known at once (the wrapper awaits only a promise).
      const fresh = deps.social.freshTweet(request.params.id);
      return fresh ? answer(request.id, fresh) : deps.social.tweet(request.params.id).then((x) => answer(request.id, x));
    },
  );
}
