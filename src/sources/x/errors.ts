// X's failures → SourceError. Two families:
//  - HTTP failures (4xx/5xx), with a Problem (application/problem+json) or an Error body;
//  - "partial errors": 200 with `errors[]` and no `data`, which is how X says a user or tweet is
//    missing, suspended or protected.
// Messages never contain the bearer token: we never echo request headers, and for 401/403 we do not
// echo the body either.
import { SourceError } from '../types.js';
import { asArray, asObject, asString, type JsonObject } from './json.js';

const TYPE_PREFIX = /^https?:\/\/api\.(?:x|twitter)\.com\/2\/problems\//;

/** The problem type's last segment, e.g. "resource-not-found" (for api.x.com and api.twitter.com). */
function problemKind(problem: JsonObject): string {
  const type = asString(problem.type) ?? '';
  return type.replace(TYPE_PREFIX, '').replace(/.*\//, '');
}

function problemText(problem: JsonObject): string {
  return [asString(problem.title), asString(problem.detail)].filter((s) => s !== undefined && s !== '').join(': ');
}

function clip(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * The error for a 200 answer that carries `errors[]` and no `data`. `what` names the resource, e.g.
 * "user @jack". The most telling problem wins: suspended, then protected, then missing.
 */
export function errorFromProblems(problems: unknown[], what: string): SourceError {
  const parsed = problems.map(asObject).filter((p): p is JsonObject => p !== undefined);
  const text = (p: JsonObject) => `${asString(p.title) ?? ''} ${asString(p.detail) ?? ''}`.toLowerCase();

  const suspended = parsed.find((p) => text(p).includes('suspended'));
  if (suspended) return new SourceError('suspended', `X says ${what} is suspended`);

  const protectedProblem = parsed.find(
    (p) => problemKind(p) === 'not-authorized-for-resource' || text(p).includes('protected'),
  );
  if (protectedProblem) return new SourceError('protected', `X says ${what} is protected: its tweets are not visible`);

  // resource-unavailable without a reason we recognize: the resource cannot be read (withheld,
  // deactivated). A retry will not help, so it is reported as missing rather than as an outage.
  const missing = parsed.find((p) => ['resource-not-found', 'resource-unavailable', 'disallowed-resource'].includes(problemKind(p)));
  if (missing) return new SourceError('not_found', `X says ${what} does not exist or is unavailable`);

  const first = parsed[0];
  const detail = first ? clip(problemText(first) || problemKind(first)) : 'no details';
  return new SourceError('bad_response', `X answered without data for ${what} (${detail})`);
}

/** The instant in `x-rate-limit-reset` (epoch seconds), else `retry-after` (seconds) from now. */
export function resetAtFromHeaders(headers: Headers, now: number): Date | undefined {
  const reset = Number(headers.get('x-rate-limit-reset') ?? Number.NaN);
  if (Number.isFinite(reset) && reset > 0) return new Date(reset * 1000);
  const retryAfter = Number(headers.get('retry-after') ?? Number.NaN);
  if (Number.isFinite(retryAfter) && retryAfter >= 0) return new Date(now + retryAfter * 1000);
  return undefined;
}

/** The error for a non-2xx answer. `body` is the parsed body when it was JSON. */
export function errorFromStatus(status: number, body: unknown, what: string, resetAt: Date | undefined): SourceError {
  if (status === 401 || status === 403) {
    return new SourceError(
      'unavailable',
      `X rejected our credentials (HTTP ${status}); check the configured bearer token and the API plan's access`,
    );
  }
  if (status === 404) return new SourceError('not_found', `X says ${what} does not exist`);
  if (status === 429) {
    const when = resetAt ? ` until ${resetAt.toISOString()}` : '';
    return new SourceError('rate_limited', `X's rate limit for ${what} is exhausted${when}`, resetAt);
  }
  const problem = asObject(body);
  const firstError = asObject(asArray(problem?.errors)[0]);
  const detail = problem ? clip(problemText(problem) || (firstError ? problemText(firstError) : '') || asString(problem.message) || '') : '';
  const suffix = detail ? `: ${detail}` : '';
  if (status >= 500) return new SourceError('unavailable', `X failed with HTTP ${status} for ${what}${suffix}`);
  // 400, 409, 422…: X refused the request as we made it; retrying the same request will not help.
  return new SourceError('bad_response', `X refused the request for ${what} with HTTP ${status}${suffix}`);
}

/** The error for a fetch that threw: our timeout, or the network. */
export function errorFromFetchFailure(err: unknown, timedOut: boolean, timeoutMs: number, what: string): SourceError {
  if (err instanceof SourceError) return err;
  const name = err instanceof Error ? err.name : '';
  if (timedOut || name === 'TimeoutError') {
    return new SourceError('timeout', `X did not answer within ${timeoutMs} ms for ${what}`);
  }
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
  return new SourceError('unavailable', `X could not be reached for ${what}: ${clip(cause)}`);
}
