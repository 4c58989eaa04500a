// Which error class each code of the gateway's gets, the details each code carries, and the typed
// error made from a non-2xx answer.
import {
  AuthenticationError,
  ConflictError,
  InsufficientCreditsError,
  InvalidRequestError,
  NotFoundError,
  ProtectedAccountError,
  RateLimitedError,
  SdgApiError,
  ServiceUnavailableError,
  UnavailableError,
  UpstreamError,
  type ErrorCode,
} from './errors.js';
import { parseRetryAfter } from './retry-after.js';
import type { components } from './schema.js';

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
  service_unavailable: ServiceUnavailableError,
} as const satisfies Record<ErrorCode, ApiErrorClass>;

type Schemas = components['schemas'];

/** details of key_limit_reached. */
export interface KeyLimitReachedDetails {
  /** Active keys the plan allows. */
  limit: number;
  /** Active keys held. */
  active: number;
  [key: string]: unknown;
}
/** details of open_jobs_limit_reached. */
export interface OpenJobsLimitDetails {
  limit: number;
  /** Unfinished batches or exports held. */
  open: number;
  [key: string]: unknown;
}
/** details of export_expired. */
export interface ExportExpiredDetails {
  /** When the file was removed. */
  expiredAt: string;
  [key: string]: unknown;
}
/** details of invalid_request. */
export interface InvalidRequestDetails {
  fields?: Array<{ field: string; message: string }>;
  [key: string]: unknown;
}

/** The details each code documents (the OpenAPI document's, and those the gateway's messages name). */
export interface DetailsByCode {
  invalid_request: InvalidRequestDetails;
  invalid_date_range: InvalidRequestDetails;
  /** `field` ('cursor') is the older form of `fields`, kept for callers that read it. */
  invalid_cursor: InvalidRequestDetails & { field?: string };
  insufficient_credits: Schemas['InsufficientCreditsDetails'];
  rate_limited: Schemas['RateLimitedDetails'];
  export_not_ready: Schemas['ExportNotReadyDetails'];
  key_limit_reached: KeyLimitReachedDetails;
  open_jobs_limit_reached: OpenJobsLimitDetails;
  export_expired: ExportExpiredDetails;
  upstream_unavailable: { retryAfterSeconds?: number; [key: string]: unknown };
  service_unavailable: { retryAfterSeconds?: number; [key: string]: unknown };
}
/** The details of an error with this code. */
export type DetailsOf<C extends ErrorCode> = C extends keyof DetailsByCode ? DetailsByCode[C] : Record<string, unknown>;

/**
 * The class of the error the SDK throws for a code of the gateway's, e.g. InsufficientCreditsError
 * for `insufficient_credits`, with its documented details typed (undefined when a server sent none).
 */
export type ErrorOfCode<C extends ErrorCode> = InstanceType<(typeof byCode)[C]> & { readonly code: C; readonly details: DetailsOf<C> | undefined };

/**
 * Whether `error` is the gateway's refusal with this code, narrowed to its class: after
 * `if (isApiError(e, 'insufficient_credits'))`, `e.required` and `e.details?.balance` are typed
 * (comparing `e.code` alone narrows nothing, and a misspelt code does not compile here).
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
  // A code this SDK does not know (or none, as from a proxy in front): unavailable, not the data source.
  if (status === 502 || status === 503 || status === 504) return UnavailableError;
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
 * The URL without its query or user info: enough to tell which call failed, and a download link's
 * query is its signature (whoever holds it may fetch the file until it expires), which has no place in a log.
 */
export function withoutQuery(url: string): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return undefined;
  }
}
