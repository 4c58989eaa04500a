import { parseRetryAfter } from './retry-after.js';
import type { components } from './schema.js';

// Typed errors: one class per kind of failure, picked by the envelope's stable `code`, so callers
// can `catch (e) { if (e instanceof InsufficientCreditsError) … }` or switch on `e.code`.

/** The codes the gateway answers in its error envelope (the document's ErrorCode). */
export type ErrorCode = components['schemas']['ErrorCode'];

/** Base of every error the SDK throws. */
export class SdgError extends Error {
  override name = 'SdgError';
}

/** The gateway answered a non-2xx status. `code` is the envelope's (or `http_<status>` without one). */
export class SdgApiError extends SdgError {
  override name = 'SdgApiError';
  constructor(
    message: string,
    readonly status: number,
    readonly code: ErrorCode | (string & {}),
    readonly requestId: string | undefined,
    readonly details: Record<string, unknown> | undefined,
    /** The URL the refused request went to, without its query (never the key, never a link's signature), to tell which call failed. */
    readonly url?: string | undefined,
  ) {
    super(message);
  }
}

/** 400: a parameter, body field, cursor or date range the gateway refused. */
export class InvalidRequestError extends SdgApiError {
  override name = 'InvalidRequestError';
}
/** 401: missing, unknown or revoked API key. */
export class AuthenticationError extends SdgApiError {
  override name = 'AuthenticationError';
}
/** 402: the balance is below the call's cost; nothing was charged. */
export class InsufficientCreditsError extends SdgApiError {
  override name = 'InsufficientCreditsError';
  /** Credits the call costs. */
  readonly required: number;
  /** The balance when it was refused. */
  readonly balance: number;
  constructor(...args: ConstructorParameters<typeof SdgApiError>) {
    super(...args);
    this.required = Number(this.details?.required);
    this.balance = Number(this.details?.balance);
  }
}
/** 403: the timeline of a protected account. */
export class ProtectedAccountError extends SdgApiError {
  override name = 'ProtectedAccountError';
}
/** 404: unknown user, tweet, community, batch, export, key or route (or another account's); an expired export's file. */
export class NotFoundError extends SdgApiError {
  override name = 'NotFoundError';
}
/** 409: an export not ready for download, an Idempotency-Key reused with another request, too many unfinished batches or exports, or keys. */
export class ConflictError extends SdgApiError {
  override name = 'ConflictError';
}
/** 429 after the retries: `retryAfterSeconds` says when the limit (`scope`: key, account, ip) refills. */
export class RateLimitedError extends SdgApiError {
  override name = 'RateLimitedError';
  get retryAfterSeconds(): number | undefined {
    const v = Number(this.details?.retryAfterSeconds);
    return Number.isFinite(v) ? v : undefined;
  }
  get scope(): string | undefined {
    return typeof this.details?.scope === 'string' ? this.details.scope : undefined;
  }
}
/** 502/503/504: the gateway's data source failed, or the gateway is unavailable. */
export class UpstreamError extends SdgApiError {
  override name = 'UpstreamError';
}

/** The gateway could not be reached (connection refused, reset, DNS, timeout). */
export class NetworkError extends SdgError {
  override name = 'NetworkError';
  /** True when the last attempt got no answer within the client's timeoutMs (rather than a refused or dropped connection). */
  readonly timedOut: boolean;
  constructor(message: string, options?: { cause?: unknown; timedOut?: boolean }) {
    super(message, options);
    this.timedOut = options?.timedOut ?? false;
  }
}

/** A wait for a batch or an export (waitForBatch, waitForExport, exportToFile, addAllToWatchlist) that reached its timeoutMs. */
export class WaitTimeoutError extends SdgError {
  override name = 'WaitTimeoutError';
}

/** An export that ended `failed`, or a downloaded file whose size or SHA-256 differ from its record. */
export class ExportError extends SdgError {
  override name = 'ExportError';
  constructor(
    message: string,
    readonly exportId: string,
  ) {
    super(message);
  }
}

/** An error from an AbortSignal (abort() or AbortSignal.timeout()): passed through as it came. */
export function isAbort(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}

type ApiErrorClass = new (...args: ConstructorParameters<typeof SdgApiError>) => SdgApiError;

// Every code of the document has its class: a new code fails the SDK's build until it is placed here.
const byCode = {
  invalid_request: InvalidRequestError,
  invalid_cursor: InvalidRequestError,
  invalid_date_range: InvalidRequestError,
  payload_too_large: InvalidRequestError,
  unsupported_media_type: InvalidRequestError,
  range_not_satisfiable: InvalidRequestError,
  missing_api_key: AuthenticationError,
  invalid_api_key: AuthenticationError,
  insufficient_credits: InsufficientCreditsError,
  protected_account: ProtectedAccountError,
  not_found: NotFoundError,
  export_expired: NotFoundError,
  export_not_ready: ConflictError,
  idempotency_conflict: ConflictError,
  open_jobs_limit_reached: ConflictError,
  key_limit_reached: ConflictError,
  rate_limited: RateLimitedError,
  upstream_error: UpstreamError,
  upstream_unavailable: UpstreamError,
  upstream_timeout: UpstreamError,
  internal_error: SdgApiError,
  service_unavailable: SdgApiError,
} as const satisfies Record<ErrorCode, ApiErrorClass>;

/** The class of the error the SDK throws for a code of the gateway's, e.g. InsufficientCreditsError for `insufficient_credits`. */
export type ErrorOfCode<C extends ErrorCode> = InstanceType<(typeof byCode)[C]> & { readonly code: C };

/**
 * Whether `error` is the gateway's refusal with this code, narrowed to its class: after
 * `if (isApiError(e, 'insufficient_credits'))`, `e.required` and `e.balance` are typed (comparing
 * `e.code` alone narrows nothing, and a misspelt code does not compile here).
 */
export function isApiError<C extends ErrorCode>(error: unknown, code: C): error is ErrorOfCode<C> {
  return error instanceof SdgApiError && error.code === code;
}

function classForStatus(status: number): ApiErrorClass {
  if (status === 400 || status === 413 || status === 415 || status === 416) return InvalidRequestError;
  if (status === 401) return AuthenticationError;
  if (status === 402) return InsufficientCreditsError;
  if (status === 403) return ProtectedAccountError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 429) return RateLimitedError;
  if (status === 502 || status === 503 || status === 504) return UpstreamError;
  return SdgApiError;
}

interface Envelope {
  error?: { code?: unknown; message?: unknown; details?: unknown };
  meta?: { requestId?: unknown };
}

/** The typed error for a non-2xx answer, from its parsed body (the envelope, or whatever came). */
export function apiErrorFrom(response: Response, body: unknown): SdgApiError {
  const env = (body && typeof body === 'object' ? body : {}) as Envelope;
  const code = typeof env.error?.code === 'string' ? env.error.code : `http_${response.status}`;
  const message = typeof env.error?.message === 'string' ? env.error.message : `The gateway answered HTTP ${response.status}.`;
  const details = env.error?.details && typeof env.error.details === 'object' ? (env.error.details as Record<string, unknown>) : undefined;
  const requestId = typeof env.meta?.requestId === 'string' ? env.meta.requestId : (response.headers.get('x-request-id') ?? undefined);
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  // Retry-After is a header; the typed error carries it even when the body does not.
  const withRetry = retryAfter !== undefined && details?.retryAfterSeconds === undefined ? { ...details, retryAfterSeconds: retryAfter } : details;
  const Cls = (byCode as Record<string, ApiErrorClass | undefined>)[code] ?? classForStatus(response.status);
  return new Cls(message, response.status, code, requestId, withRetry, withoutQuery(response.url));
}

/**
 * The URL without its query: enough to tell which call failed, and a download link's query is its
 * signature (whoever holds it may fetch the file until it expires), which has no place in a log.
 */
function withoutQuery(url: string): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return undefined;
  }
}
