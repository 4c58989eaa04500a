// One error type with stable codes; one table from code to HTTP status (docs/spec/contract.md, section 5).
export const errorStatus = {
  invalid_request: 400,
  invalid_cursor: 400,
  invalid_date_range: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  insufficient_credits: 402,
  protected_account: 403,
  not_found: 404,
  export_expired: 404,
  export_not_ready: 409,
  idempotency_conflict: 409,
  key_limit_reached: 409,
  open_jobs_limit_reached: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  upstream_error: 502,
  upstream_unavailable: 503,
  upstream_timeout: 504,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = errorStatus[code];
  }
}

