// The exit codes of sdg-client: one per kind of failure, so a script can tell what went wrong.
import {
  AuthenticationError,
  ConflictError,
  ExportError,
  InsufficientCreditsError,
  InvalidRequestError,
  NetworkError,
  NotFoundError,
  ProtectedAccountError,
  RateLimitedError,
  SdgError,
  UnavailableError,
} from '../errors.js';

/** A failure of the command line's own (an unwritable -o, a key's secret lost), with its exit code and a code for --json. */
export class CliError extends SdgError {
  override name = 'CliError';
  constructor(
    message: string,
    readonly code: string,
    readonly exitCode: number,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Some accounts of a watchlist batch did not go in (or out): not found, over the watchlist's limit, or failed. `exitCode`: the first such kind's. */
export class BatchItemsError extends SdgError {
  override name = 'BatchItemsError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export const exitCodes = {
  ok: 0,
  /** An unexpected error (a bug here or in the gateway). */
  failure: 1,
  /** A bad command line, or a request the gateway refused as invalid (400, 413, 415, 416). */
  usage: 2,
  /** Missing, unknown or revoked API key (401). */
  auth: 3,
  /** The balance is below the call's cost (402). */
  credits: 4,
  /** Still rate limited after the retries (429). */
  rateLimited: 5,
  /** No such user, tweet, community, batch, export or key (404). */
  notFound: 6,
  /** A protected account's timeline (403). */
  forbidden: 7,
  /** An export not ready, an Idempotency-Key reused for another request, too many unfinished jobs (409). */
  conflict: 8,
  /** The gateway's data source failed or the gateway is unavailable (502, 503, 504). */
  upstream: 9,
  /** The gateway could not be reached. */
  network: 10,
  /** An export failed, or its file did not match its size or SHA-256. */
  export: 11,
  /** `keys create`: the key was created but its secret was lost on the way (the key is revoked). */
  keyLost: 12,
} as const;

export function exitCodeFor(error: unknown): number {
  if (error instanceof InvalidRequestError) return exitCodes.usage;
  if (error instanceof AuthenticationError) return exitCodes.auth;
  if (error instanceof InsufficientCreditsError) return exitCodes.credits;
  if (error instanceof RateLimitedError) return exitCodes.rateLimited;
  if (error instanceof NotFoundError) return exitCodes.notFound;
  if (error instanceof ProtectedAccountError) return exitCodes.forbidden;
  if (error instanceof ConflictError) return exitCodes.conflict;
  // 502, 503, 504: the data source or the gateway itself (its storage) unavailable.
  if (error instanceof UnavailableError) return exitCodes.upstream;
  if (error instanceof NetworkError) return exitCodes.network;
  if (error instanceof ExportError) return exitCodes.export;
  if (error instanceof BatchItemsError || error instanceof CliError) return error.exitCode;
  return exitCodes.failure;
}
