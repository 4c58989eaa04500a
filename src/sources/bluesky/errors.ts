// What the AppView (through @atproto/api's XRPC client) throws → SourceError.
//
// The client throws an XRPCError for everything: `status` is the HTTP status, or 1 when no answer
// came (network failure, our abort), or 2 when the answer failed the lexicon's validation; `error` is
// the XRPC error name ("InvalidRequest", "AccountTakedown"…); `headers` are the answer's. It is not
// exported by @atproto/api, so it is recognized by shape.
import { findCause } from '../../errors/cause-chain.js';
import { refusedEncoding } from '../outbound-fetch.js';
import { resetAtFromHeaders } from '../rate-limits.js';
import { SourceError, type SourceErrorKind } from '../types.js';

interface XrpcErrorLike {
  status: number;
  error: string;
  message: string;
  headers?: Record<string, string | undefined>;
  cause?: unknown;
}

function asXrpcError(err: unknown): XrpcErrorLike | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as Error & Partial<XrpcErrorLike>;
  return typeof e.status === 'number' && typeof e.error === 'string' ? (e as XrpcErrorLike) : undefined;
}

function clip(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function isTimeout(err: unknown): boolean {
  return findCause(err, (e) => e.name === 'TimeoutError') !== undefined;
}

function causeText(err: Error): string {
  const cause = err.cause instanceof Error ? err.cause : undefined;
  const deeper = cause?.cause instanceof Error ? cause.cause : undefined;
  return clip(deeper?.message ?? cause?.message ?? err.message);
}

export interface CallContext {
  /** What was asked for, e.g. "user @alice.bsky.social". */
  what: string;
  now: number;
}

/** The SourceError for a failed AppView call. */
export function toSourceError(err: unknown, ctx: CallContext): SourceError {
  if (err instanceof SourceError) return err;
  const { what } = ctx;
  if (isTimeout(err)) return new SourceError('timeout', `The Bluesky AppView did not answer in time for ${what}`);
  const refused = refusedEncoding(err);
  if (refused) return new SourceError('bad_response', `The Bluesky AppView's answer for ${what} could not be read: ${refused.message}`, undefined, { error: refused.message });
  const x = asXrpcError(err);
  if (!x) {
    const message = err instanceof Error ? err.message : String(err);
    return new SourceError('unavailable', `The Bluesky AppView could not be reached for ${what}: ${clip(message)}`, undefined, { error: clip(message, 500) });
  }
  const detail = clip(x.message && x.message !== x.error ? `${x.error}: ${x.message}` : x.error);
  const upstream = x.status >= 100 ? { status: x.status, body: clip(`${x.error}: ${x.message}`, 500) } : { error: causeText(x as unknown as Error) };
  const error = (kind: SourceErrorKind, message: string, resetAt?: Date) => new SourceError(kind, message, resetAt, upstream);
  switch (true) {
    case x.status === 1:
      return error('unavailable', `The Bluesky AppView could not be reached for ${what}: ${causeText(x as unknown as Error)}`);
    case x.status === 2:
      return error('bad_response', `The Bluesky AppView sent an answer for ${what} that does not match its lexicon: ${clip(x.message)}`);
    case x.status === 429: {
      const resetAt = resetAtFromHeaders(x.headers, 'ratelimit-', ctx.now);
      const when = resetAt ? ` until ${resetAt.toISOString()}` : '';
      return error('rate_limited', `The Bluesky AppView's rate limit for ${what} is exhausted${when}`, resetAt);
    }
    case x.error === 'AccountTakedown':
      return error('suspended', `Bluesky says ${what} is suspended (taken down)`);
    case x.error === 'AccountDeactivated':
      return error('not_found', `Bluesky says ${what} is deactivated`);
    case x.status === 400 && (/not ?found/i.test(x.error) || /not found/i.test(x.message)):
      return error('not_found', `Bluesky says ${what} does not exist`);
    case x.status === 400 && /must be a valid (did|handle|at-identifier)|valid did or a handle/i.test(x.message):
      return error('not_found', `${what} cannot exist on Bluesky (${clip(x.message)})`);
    case x.error === 'BlockedActor' || x.error === 'BlockedByActor':
      return error('not_found', `Bluesky does not show ${what} (${x.error})`);
    case x.status === 401 || x.status === 403:
      return error('rejected', `The Bluesky AppView refused a public read of ${what} (HTTP ${x.status}): check BLUESKY_APPVIEW_URL`);
    case x.status === 404 || x.status === 501:
      return error('rejected', `The service at BLUESKY_APPVIEW_URL does not serve the call for ${what} (HTTP ${x.status}): is it an AppView?`);
    case x.status >= 500:
      return error('unavailable', `The Bluesky AppView failed with HTTP ${x.status} for ${what}: ${detail}`);
    default:
      // 400 and other 4xx: the AppView refused the request as we made it; the same request would fail again.
      return error('rejected', `The Bluesky AppView refused the request for ${what} with HTTP ${x.status}: ${detail}`);
  }
}
