// Envelopes of the contract (docs/spec/contract.md, section 3) as TypeBox builders, so every route's schema states its exact shape.
// A `title` names a schema: the OpenAPI document lists it once under components.schemas and refers
// to it by $ref (src/http/openapi/components.ts); validation and serialization ignore titles.
import { Type, type TSchema } from '@sinclair/typebox';
import { errorStatus, type ErrorCode } from '../errors/app-error.js';

export const Meta = Type.Object(
  {
    requestId: Type.String({ description: 'Also sent as the X-Request-Id header; quote it when reporting a problem.' }),
    cached: Type.Boolean({ description: 'true when the answer was served from the gateway’s store rather than read from the data source now' }),
  },
  { title: 'Meta' },
);

/** `{ data, meta }`; `description` says what a successful answer is (the OpenAPI response's description). */
export const single = <T extends TSchema>(data: T, description = 'The requested record.') =>
  Type.Object({ data, meta: Meta }, { 'x-response-description': description });

/** One page of a list; `description` says what a successful answer is. */
export const paginated = <T extends TSchema>(item: T, description = 'One page of the list.') =>
  Type.Object(
    {
      items: Type.Array(item),
      hasNextPage: Type.Boolean({ description: 'true when another page follows; then nextCursor is set' }),
      nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'pass as ?cursor= to read the next page; null on the last page' }),
      requestId: Type.String({ description: 'Also sent as the X-Request-Id header.' }),
      cached: Type.Boolean(),
    },
    { 'x-response-description': description },
  );

const codes = Object.keys(errorStatus) as ErrorCode[];

// A string with an enum rather than a union of literals: each error response narrows it to its own
// codes (errorResponse below), and the serializer can merge an enum with those, not a union.
export const ErrorCodeSchema = Type.Unsafe<ErrorCode>(
  Type.String({ enum: codes, title: 'ErrorCode', description: 'Stable machine-readable error code; each maps to one HTTP status.' }),
);

/** The `error` member of the envelope, with `code` as given (all codes, or those of one answer). */
const errorBody = (code: TSchema) =>
  Type.Object({
    code,
    message: Type.String({ description: 'For people: what went wrong and what to do about it.' }),
    details: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'Facts about the error: `fields` (invalid_request), `required` and `balance` (insufficient_credits), `scope` and `retryAfterSeconds` (rate_limited), `retryAfterSeconds` (upstream_unavailable).',
        },
      ),
    ),
  });
const errorMeta = Type.Object({ requestId: Type.String({ description: 'Also sent as the X-Request-Id header.' }) });

export const ErrorEnvelope = Type.Object(
  { error: errorBody(ErrorCodeSchema), meta: errorMeta },
  { title: 'ErrorEnvelope', description: 'Every non-2xx answer the gateway shapes.' },
);

/** What a response of each error status means, for its OpenAPI description. */
const statusMeaning: Record<number, string> = {
  400: 'The request is invalid (details.fields names what); nothing was charged.',
  401: 'The X-API-Key header is missing, or the key is unknown, malformed or revoked.',
  402: 'The balance is below this call’s cost (details.required, details.balance); nothing was charged.',
  403: 'The account is protected: its content is not visible.',
  404: 'Not found, or not visible to this account.',
  409: 'A conflict with the current state (see the code).',
  413: 'The body is larger than 1 MiB.',
  415: 'The body is not sent as application/json.',
  429: 'Too many requests: wait Retry-After seconds (details.scope says which limit).',
  500: 'A fault of the gateway; the call was not charged. Retrying is safe.',
  502: 'The data source sent an answer the gateway could not read; retry later.',
  503: 'The data source is unavailable or rate limiting the gateway; retry later (Retry-After when known).',
  504: 'The data source did not answer in time; retry later.',
};

/** The error envelope narrowed to the codes an operation answers with one status. */
export function errorResponse(status: number, answered: readonly ErrorCode[]) {
  // The second member repeats the whole shape, so that each says everything an answer holds.
  return Type.Intersect(
    [ErrorEnvelope, Type.Object({ error: errorBody(Type.Union(answered.map((c) => Type.Literal(c)))), meta: errorMeta })],
    { 'x-response-description': statusMeaning[status] ?? 'An error.' },
  );
}

/** Response schemas by status for a list of error codes (the codes grouped by their status). */
export function errorResponses(answered: Iterable<ErrorCode>): Record<number, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(answered)) {
    const status = errorStatus[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<number, TSchema> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) out[status] = errorResponse(status, list.sort());
  return out;
}

export const PageQuery = Type.Object(
  {
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: 'nextCursor of the previous page; leave out for the first page', examples: ['eyJwIjoiMTcwMDAwMDAwMDAwMCJ9.c2lnbmF0dXJl'] }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'items per page (1 to 100)', examples: [20] })),
  },
  { additionalProperties: false },
);

export const NumericId = Type.String({ pattern: '^[0-9]{1,19}$', description: 'numeric id', examples: ['1849284729384756102'] });
