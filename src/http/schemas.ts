// Envelopes of the contract (docs/spec/contract.md, section 3) as TypeBox builders, so every route's schema states its exact shape.
// A `title` names a schema: the OpenAPI document lists it once under components.schemas and refers
// to it by $ref (src/http/openapi/components.ts); validation and serialization ignore titles.
import { Kind, Type, TypeRegistry, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { ADDRESS_PATTERN } from '../connectors/wallet/schema.js';
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
      hasNextPage: Type.Boolean({ description: 'true when another page follows; then nextCursor is set', examples: [true] }),
      nextCursor: Type.Union([Type.String(), Type.Null()], {
        description: 'pass as ?cursor= to read the next page; null on the last page',
        examples: ['eyJwIjoiMTcwMDAwMDAwMDAwMCJ9.c2lnbmF0dXJl'],
      }),
      requestId: Type.String({ description: 'Also sent as the X-Request-Id header.', examples: ['req_Xk2f9Qa81LmZ3'] }),
      cached: Type.Boolean({ description: 'true when the page was served from the gateway’s store rather than read from the data source now', examples: [false] }),
    },
    { 'x-response-description': description },
  );

/**
 * A string from a fixed list, as `{type: 'string', enum}`: the form the serializer compiles quickly
 * and generators read as a union type (a TypeBox union of literals is neither). Registered below so
 * that TypeBox's checker (responses in tests) enforces the list too.
 */
export function StringEnum<T extends string>(values: readonly T[], options: Record<string, unknown> = {}): TUnsafe<T> {
  return Type.Unsafe<T>({ ...options, [Kind]: 'StringEnum', type: 'string', enum: [...values] });
}
TypeRegistry.Set<{ enum: string[] }>('StringEnum', (schema, value) => typeof value === 'string' && schema.enum.includes(value));

const codes = Object.keys(errorStatus) as ErrorCode[];

export const ErrorCodeSchema = StringEnum(codes, { title: 'ErrorCode', description: 'Stable machine-readable error code; each maps to one HTTP status.' });

const anyDetails = Type.Optional(
  Type.Object(
    {},
    {
      additionalProperties: true,
      description:
        'Facts about the error: `fields` (invalid_request), `required`, `balance` and `available` (insufficient_credits), `scope` and `retryAfterSeconds` (rate_limited), `retryAfterSeconds` (upstream_unavailable).',
    },
  ),
);

/** The details an answer with this code always carries (more may be added later: additional properties). */
const codeDetails: Partial<Record<ErrorCode, TSchema>> = {
  insufficient_credits: Type.Object(
    {
      required: Type.Integer({ minimum: 0, description: 'credits this call costs' }),
      balance: Type.Integer({ description: 'the account’s balance (as X-Credits-Remaining)' }),
      available: Type.Integer({ description: 'what the balance has free now: less than balance while other calls of the account in progress hold credits (a call that then fails frees its hold, uncharged)' }),
    },
    { additionalProperties: true, title: 'InsufficientCreditsDetails' },
  ),
  rate_limited: Type.Object(
    {
      scope: StringEnum(['key', 'account', 'ip'], { description: 'which limit was reached: the key’s, the account’s, or the per-address limit on requests without a valid key' }),
      retryAfterSeconds: Type.Integer({ minimum: 0, description: 'as in Retry-After' }),
    },
    { additionalProperties: true, title: 'RateLimitedDetails' },
  ),
  export_not_ready: Type.Object({ status: Type.String({ description: 'the export’s status now' }) }, { additionalProperties: true, title: 'ExportNotReadyDetails' }),
  key_limit_reached: Type.Object(
    { limit: Type.Integer({ minimum: 0, description: 'active keys the plan allows' }), active: Type.Integer({ minimum: 0, description: 'active keys held' }) },
    { additionalProperties: true, title: 'KeyLimitReachedDetails' },
  ),
};

/** The envelope, with `code` as given (all codes, or those of one answer) and its details when known. */
const envelope = (code: TSchema, options: Record<string, unknown>, details: TSchema = anyDetails) =>
  Type.Object(
    {
      error: Type.Object({
        code,
        message: Type.String({ description: 'For people: what went wrong and what to do about it.' }),
        details,
      }),
      meta: Type.Object({ requestId: Type.String({ description: 'Also sent as the X-Request-Id header.' }) }),
    },
    options,
  );

/** Every non-2xx answer the gateway shapes; the OpenAPI document refers to it from every error response. */
export const ErrorEnvelope = envelope(ErrorCodeSchema, { title: 'ErrorEnvelope', description: 'Every non-2xx answer the gateway shapes.' });

/** What each code means, for the OpenAPI description of the responses that can carry it. */
const codeMeaning: Record<ErrorCode, string> = {
  invalid_request: 'the request is invalid; details.fields names what',
  invalid_cursor: 'the cursor was not issued by this list, or with other filters',
  invalid_date_range: 'a date is malformed, or the range is empty or longer than 24 h',
  missing_api_key: 'no X-API-Key header',
  invalid_api_key: 'the key is unknown, malformed or revoked',
  insufficient_credits: 'the balance, less what calls in progress hold, is below this call’s cost (details.required, details.balance, details.available)',
  protected_account: 'the account is protected: its tweets are not visible',
  not_found: 'no such record, or not one of this account’s',
  export_not_ready: 'the export has not completed (details.status)',
  idempotency_conflict: 'the Idempotency-Key was used with another request, or its first request is still running',
  key_limit_reached: 'the account holds its plan’s number of active keys (details.limit)',
  open_jobs_limit_reached: 'the account has its limit of unfinished batches or exports (details.limit, details.open); wait for one to finish',
  export_expired: 'the export’s file was removed under the retention policy (details.expiredAt); generate it again',
  payload_too_large: 'the body is larger than 1 MiB',
  unsupported_media_type: 'the body is not sent as application/json',
  range_not_satisfiable: 'the Range header asks for bytes outside the file (Content-Range gives its size)',
  rate_limited: 'too many requests; wait Retry-After seconds (details.scope says which limit)',
  internal_error: 'a fault of the gateway; retrying is safe',
  service_unavailable: 'the gateway cannot use its storage right now (a database restarting, a full disk); retry after Retry-After seconds',
  upstream_error: 'the data source sent an answer the gateway could not read; retry later',
  upstream_unavailable: 'the data source is unavailable or rate limiting the gateway; retry later (Retry-After when known)',
  upstream_timeout: 'the data source did not answer in time; retry later',
};

/** The error envelope narrowed to the codes an operation answers with one status. */
export function errorResponse(status: number, answered: readonly ErrorCode[]) {
  const meaning = answered.map((c) => `${c}: ${codeMeaning[c]}.`).join(' ');
  const details = answered.length === 1 ? codeDetails[answered[0]!] : undefined;
  return envelope(StringEnum(answered), { 'x-response-description': `${meaning} Nothing was charged.` }, details);
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

/** The query of an operation that takes no query parameters. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const PageQuery = Type.Object(
  {
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2048, description: 'nextCursor of the previous page; leave out for the first page', examples: ['eyJwIjoiMTcwMDAwMDAwMDAwMCJ9.c2lnbmF0dXJl'] }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'items per page (1 to 100)', examples: [20] })),
  },
  { additionalProperties: false },
);

/** A numeric id (X's snowflakes fit in 19 digits). */
export const NUMERIC_ID_PATTERN = '^[0-9]{1,19}$';
/** X handles are [A-Za-z0-9_]{1,15}; Bluesky handles are domain names. Both fit this; '@' does not. */
export const HANDLE_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,252}$';

/**
 * Characters a label may not hold (a regex class's inside): control characters, which a terminal acts
 * on, and the text-direction controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), with
 * which a name reads reversed wherever it is shown ("Trojan Source").
 */
export const LABEL_FORBIDDEN = '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069';
/**
 * Characters that show nothing (a regex class's inside): a label of only these and spaces is blank.
 * Allowed beside others (a zero-width joiner is part of some emoji). Besides the zero-width and
 * format characters: the combining grapheme joiner, the Hangul fillers (U+115F, U+1160, U+3164,
 * U+FFA0), Khmer's inherent vowels, Mongolian's variation selectors and vowel separator, the blank
 * Braille pattern and the variation selectors, all drawn as nothing or as a blank.
 */
export const LABEL_INVISIBLE =
  '\\s\\u00ad\\u034f\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200d\\u2060-\\u2064\\u2800\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0';

/**
 * A label a caller names something with (an API key's name): not blank, nothing forbidden (above).
 * It is shown back in lists, the dashboard and both command lines; the operator's `sdg` refuses the
 * same (src/cli/output.ts).
 */
export const LABEL_PATTERN = `^[^${LABEL_FORBIDDEN}]*[^${LABEL_INVISIBLE}${LABEL_FORBIDDEN}][^${LABEL_FORBIDDEN}]*$`;

/** What a value failing one of the patterns above must be, in words (a 400's message, error-handler.ts). */
export const PATTERN_WORDS: ReadonlyMap<string, string> = new Map([
  [NUMERIC_ID_PATTERN, 'must be a numeric id of 1 to 19 digits'],
  [HANDLE_PATTERN, 'must be a handle without the at-sign: letters, digits, _ . and - (at most 253 characters)'],
  [ADDRESS_PATTERN, 'must be an address: 0x and 40 hexadecimal digits'],
  [LABEL_PATTERN, 'must not be blank or hold control or text-direction characters'],
]);

export const NumericId = Type.String({ pattern: NUMERIC_ID_PATTERN, description: 'numeric id', examples: ['1849284729384756102'] });
