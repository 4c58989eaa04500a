// What every call answers besides its data: the request id, the credits it cost and what is left,
// the rate limit, and whether the answer was replayed for an Idempotency-Key.

export interface Credits {
  /** Credits this call cost (0 for free calls and replays). */
  charged: number;
  /** The balance after the call. */
  remaining: number;
}

export interface RateLimit {
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

export interface ResponseMeta {
  requestId: string | undefined;
  status: number;
  /** Undefined only for answers without the headers (e.g. unauthenticated ones). */
  credits: Credits | undefined;
  rateLimit: RateLimit | undefined;
  /** True when the gateway replayed the first answer to this Idempotency-Key. */
  replayed: boolean;
}

/** One call's answer: its data and its meta. */
export interface Result<T> extends ResponseMeta {
  data: T;
}

function int(headers: Headers, name: string): number | undefined {
  const v = headers.get(name);
  if (v === null || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

export function metaOf(response: Response): ResponseMeta {
  const h = response.headers;
  const charged = int(h, 'x-credits-charged');
  const remaining = int(h, 'x-credits-remaining');
  const limit = int(h, 'ratelimit-limit');
  const left = int(h, 'ratelimit-remaining');
  const reset = int(h, 'ratelimit-reset');
  return {
    requestId: h.get('x-request-id') ?? undefined,
    status: response.status,
    credits: charged !== undefined && remaining !== undefined ? { charged, remaining } : undefined,
    rateLimit: limit !== undefined && left !== undefined ? { limit, remaining: left, resetSeconds: reset ?? 0 } : undefined,
    replayed: h.get('idempotent-replayed') === 'true',
  };
}
