import { Type } from '@sinclair/typebox';
import { keysPage, revokeKey, type KeyPosition, type KeyStatus } from '../../accounts/accounts-repo.js';
import { createKeyWithinLimit, keyLimitOf } from '../../accounts/key-limit.js';
import { AppError } from '../../errors/app-error.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { LABEL_PATTERN, PageQuery, paginated, single } from '../../http/schemas.js';
import { keysetPage } from '../../pagination/keyset-page.js';

export const NewApiKey = Type.Object({
  id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  key: Type.Union([Type.String(), Type.Null()], {
    description: 'The secret: shown only in this response. A replay of it (same Idempotency-Key) answers null, as the secret is never kept.',
  }),
  prefix: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
}, { title: 'NewApiKey' });
export const ApiKeyView = Type.Object({
  id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  prefix: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
}, { title: 'ApiKey' });
const CreateBody = Type.Object(
  { name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: LABEL_PATTERN, description: 'a label of your choice, to tell keys apart: not blank, no control or text-direction characters' })) },
  { additionalProperties: false, examples: [{ name: 'ci' }] },
);

const KeysQuery = Type.Object(
  {
    ...PageQuery.properties,
    status: Type.Optional(
      Type.Union([Type.Literal('active'), Type.Literal('revoked')], { description: 'only the active keys, or only the revoked ones; leave out for all of them', examples: ['active'] }),
    ),
  },
  { additionalProperties: false },
);

function withoutSecret(body: string): string {
  const answer = JSON.parse(body) as { data: { key: string | null } };
  answer.data.key = null;
  return JSON.stringify(answer);
}

export function registerApiKeyRoutes(app: App, deps: Pick<Deps, 'config' | 'cursors' | 'keys' | 'store'>): void {
  app.post(
    '/api/v1/api-keys',
    {
      schema: {
        operationId: 'createApiKey',
        tags: ['account'],
        summary: 'Creates an API key for the calling account. The key is shown once.',
        description:
          'The answer holds the secret (`key`) once: store it then. An account holds at most its plan’s number of active keys (keyLimit); beyond it, 409 key_limit_reached. A replay of the same Idempotency-Key answers the key with `key` null, as the secret is never kept.',
        body: CreateBody,
        response: { 201: single(NewApiKey, 'The new key, with its secret.') },
      },
      // The kept answer of an Idempotency-Key would otherwise hold the secret, replayable by any key
      // of the account for a day: it keeps the key's id and prefix only.
      config: { keptAnswer: withoutSecret, errors: ['key_limit_reached'] },
      // Every field is optional: a POST with no body at all (`curl -X POST`) is `{}`, not a 400.
      // A body that is there is still parsed and checked as JSON.
      preValidation: (request, _reply, done) => {
        if (request.body === undefined && !request.headers['content-type'] && !request.headers['transfer-encoding'] && (request.headers['content-length'] ?? '0') === '0') request.body = {};
        done();
      },
    },
    async (request, reply) => {
      const k = await createKeyWithinLimit(deps.store.db, request.auth!.accountId, request.body.name ?? null, keyLimitOf(deps.config, request.auth!.planId));
      reply.code(201);
      return { data: k, meta: { requestId: request.id, cached: false } };
    },
  );

  app.get(
    '/api/v1/api-keys',
    {
      schema: {
        operationId: 'listApiKeys',
        tags: ['account'],
        summary: "The account's API keys, revoked ones included, newest first (never the secrets).",
        description:
          'Every key of the account, active and revoked, with its id, label and prefix (the first characters of the secret, to recognise it); ?status=active or ?status=revoked keeps those only. Paginated: pass nextCursor as ?cursor= with the same status (a cursor of another status is invalid_cursor).',
        querystring: KeysQuery,
        response: { 200: paginated(ApiKeyView, 'One page of the account’s keys.') },
      },
      config: { errors: ['invalid_cursor'] },
    },
    async (request) => {
      const accountId = request.auth!.accountId;
      const limit = request.query.limit ?? 20;
      const status: KeyStatus | undefined = request.query.status;
      // A cursor belongs to its filter: one of another status would skip or repeat keys.
      const list = status === undefined ? `api-keys:${accountId}` : `api-keys:${accountId}:${status}`;
      const before = request.query.cursor ? deps.cursors.decode<KeyPosition>(list, request.query.cursor) : undefined;
      const rows = await keysPage(deps.store.db, accountId, limit, before && { createdAt: String(before.createdAt), id: String(before.id) }, status);
      return keysetPage(request, deps.cursors, list, rows, limit, (k) => k, (k) => ({ createdAt: k.createdAt, id: k.id }) satisfies KeyPosition);
    },
  );

  app.delete(
    '/api/v1/api-keys/:id',
    {
      schema: {
        operationId: 'revokeApiKey',
        tags: ['account'],
        summary: 'Revokes one of the account’s keys; it stops working at once.',
        description: 'The key answers 401 invalid_api_key from then on; its ledger entries stay. The key making this call may revoke itself. Another account’s key is 404 not_found.',
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'the key’s id (not its secret)', examples: ['key_Z3kPq8Lm2XaR'] }) }),
        response: { 200: single(ApiKeyView, 'The revoked key.') },
      },
      config: { errors: ['not_found'] },
    },
    async (request) => {
      const k = await revokeKey(deps.store.db, request.params.id, request.auth!.accountId);
      deps.keys.forget();
      if (!k) throw new AppError('not_found', `No API key ${request.params.id} on this account.`);
      return { data: k, meta: { requestId: request.id, cached: false } };
    },
  );
}
