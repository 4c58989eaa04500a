import type { Credits } from './result.js';
import type { components } from './schema.js';

// Typed errors: one class per kind of failure, picked by the envelope's stable `code` (error-codes.ts),
// so callers can `catch (e) { if (e instanceof InsufficientCreditsError) … }` or switch on `e.code`.

/** The codes the gateway answers in its error envelope (the document's ErrorCode). */
export type ErrorCode = components['schemas']['ErrorCode'];

/** Base of every error the SDK throws. */
export class SdgError extends Error {
  override name = 'SdgError';
  /**
   * The Idempotency-Key a POST was sent with (the caller's, or the one the SDK made). The POST may
   * have been done even though it failed here: sending it again with this key (`idempotencyKey`
   * in its options) answers what the first did, without doing it twice.
   */
  idempotencyKey: string | undefined;
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

/** A finite number from the details, or undefined (a server that sent none, or something else). */
function num(details: Record<string, unknown> | undefined, key: string): number | undefined {
  const v = details?.[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** 400: a parameter, body field, cursor or date range the gateway refused. */
export class InvalidRequestError extends SdgApiError {
  override name = 'InvalidRequestError';
}
/** 401: missing, unknown or revoked API key. */
export class AuthenticationError extends SdgApiError {
  override name = 'AuthenticationError';
}
/** 402: the balance, less what the account's calls in progress hold, is below the call's cost; nothing was charged. */
export class InsufficientCreditsError extends SdgApiError {
  override name = 'InsufficientCreditsError';
  /** Credits the call costs (undefined when the answer did not say). */
  get required(): number | undefined {
    return num(this.details, 'required');
  }
  /** The balance when it was refused (undefined when the answer did not say). */
  get balance(): number | undefined {
    return num(this.details, 'balance');
  }
  /**
   * What the balance had free when it was refused: less than `balance` while other calls of the
   * account held credits (a retry once they end may pass). Undefined when the answer did not say.
   */
  get available(): number | undefined {
    return num(this.details, 'available');
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
/** Which limit a 429 reached: the key's, the account's, or the per-address one on requests without a valid key. */
export type RateLimitScope = components['schemas']['RateLimitedDetails']['scope'];
const scopes: readonly string[] = ['key', 'account', 'ip'] satisfies RateLimitScope[];

/** 429 after the retries: `retryAfterSeconds` says when the limit (`scope`) refills. */
export class RateLimitedError extends SdgApiError {
  override name = 'RateLimitedError';
  get retryAfterSeconds(): number | undefined {
    return num(this.details, 'retryAfterSeconds');
  }
  get scope(): RateLimitScope | undefined {
    const s = this.details?.scope;
    return typeof s === 'string' && scopes.includes(s) ? (s as RateLimitScope) : undefined;
  }
}
/**
 * 502/503/504 after the retries: the gateway or its data source is unavailable; nothing was charged,
 * except a 503 whose `details.maybeCharged` is true (the gateway lost its storage while charging the
 * call: its usage shows a charge with the request id if there was one). `retryAfterSeconds` when the
 * answer said (Retry-After).
 */
export class UnavailableError extends SdgApiError {
  override name = 'UnavailableError';
  get retryAfterSeconds(): number | undefined {
    return num(this.details, 'retryAfterSeconds');
  }
}
/** The gateway's data source failed (upstream_error 502, upstream_unavailable 503, upstream_timeout 504). */
export class UpstreamError extends UnavailableError {
  override name = 'UpstreamError';
}
/** The gateway cannot use its own storage (service_unavailable, 503): retry after Retry-After. */
export class ServiceUnavailableError extends UnavailableError {
  override name = 'ServiceUnavailableError';
}

/**
 * The gateway could not be reached, or its answer was lost (connection refused, reset, DNS, TLS, no
 * answer within timeoutMs). `maybeCharged` says whether the request may have reached the gateway.
 */
export class NetworkError extends SdgError {
  override name = 'NetworkError';
  /** True when the last attempt got no answer within the client's timeoutMs (rather than a refused or dropped connection). */
  readonly timedOut: boolean;
  /**
   * True when the request may have reached the gateway and been done: a charged call may have been
   * charged (it is not retried unless `retry.retryCharged`), a POST may have been done (send it
   * again with `idempotencyKey`). False when it provably never left (refused, DNS, TLS) or was free.
   */
  readonly maybeCharged: boolean;
  constructor(message: string, options?: { cause?: unknown; timedOut?: boolean; maybeCharged?: boolean }) {
    super(message, options);
    this.timedOut = options?.timedOut ?? false;
    this.maybeCharged = options?.maybeCharged ?? false;
  }
}

/**
 * The gateway answered 2xx, so the call went through (a charged call was charged: `credits`), but
 * its body could not be read: cut short, stalled for timeoutMs, not JSON, or without its data.
 */
export class UnreadableAnswerError extends SdgError {
  override name = 'UnreadableAnswerError';
  readonly status: number;
  readonly requestId: string | undefined;
  /** What the answer's headers said it cost (X-Credits-Charged), when they did. */
  readonly credits: Credits | undefined;
  /** True when no bytes of the body came for timeoutMs. */
  readonly timedOut: boolean;
  constructor(message: string, o: { status: number; requestId: string | undefined; credits: Credits | undefined; cause?: unknown; timedOut?: boolean }) {
    super(message, { cause: o.cause });
    this.status = o.status;
    this.requestId = o.requestId;
    this.credits = o.credits;
    this.timedOut = o.timedOut ?? false;
  }
}

/**
 * A wait for a batch or an export (waitForBatch, waitForExport, exportToFile, addAllToWatchlist) that
 * reached its timeoutMs. The job goes on at the gateway: `exportId` (or `batchId`) names it, to wait
 * for it again or download it rather than make another.
 */
export class WaitTimeoutError extends SdgError {
  override name = 'WaitTimeoutError';
  readonly exportId: string | undefined;
  readonly batchId: string | undefined;
  constructor(message: string, job: { exportId?: string; batchId?: string } = {}) {
    super(message);
    this.exportId = job.exportId;
    this.batchId = job.batchId;
  }
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
