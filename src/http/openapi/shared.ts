// Headers and parameters every operation shares, declared once under components and referred to by $ref.

const seconds = { type: 'integer', minimum: 0 };
const count = { type: 'integer', minimum: 0 };

export const sharedHeaders = {
  'X-Request-Id': {
    description: 'This request’s id, also in the body (meta.requestId or requestId); quote it when reporting a problem.',
    required: true,
    schema: { type: 'string' },
    example: 'req_Xk2f9Qa81LmZ3',
  },
  'X-Credits-Charged': {
    description: 'Credits this call charged: the operation’s cost on success, 0 on any error or replay.',
    schema: count,
    example: 100,
  },
  'X-Credits-Remaining': { description: 'The account’s credit balance after this call.', schema: { type: 'integer' }, example: 9900 },
  'RateLimit-Limit': { description: 'Requests a minute this key may make (its plan’s figure or the account’s override).', schema: count, example: 600 },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: count, example: 599 },
  'RateLimit-Reset': { description: 'Seconds until the window refills.', schema: seconds, example: 42 },
  'Cache-Control': {
    description: 'no-store: the answer is one account’s (a new key’s secret among them), for no cache on the way to keep.',
    schema: { type: 'string', enum: ['no-store'] },
    example: 'no-store',
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: seconds, example: 12 },
  'Idempotent-Replayed': {
    description: 'Present (true) when this answer is the replay of an earlier request with the same Idempotency-Key; nothing was done or charged again.',
    schema: { type: 'string', enum: ['true'] },
    example: 'true',
  },
};

export type HeaderName = keyof typeof sharedHeaders;

export const sharedParameters = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Makes a retry safe: a repeat with the same key and body within a day replays the first answer (Idempotent-Replayed: true) and charges nothing; the same key with another body, or while the first is still running, is 409 idempotency_conflict. 1 to 255 visible ASCII characters (no spaces), e.g. a UUID.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]{1,255}$' },
    example: '5f0c6a8e-2d7b-4e61-9a43-1c2b3d4e5f60',
  },
};
