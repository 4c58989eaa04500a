// X's failures → SourceError. Two families:
//  - HTTP failures (4xx/5xx), with a Problem (application/problem+json) or an Error body;
//  - "partial errors": 200 with `errors[]` and no `data`, which is how X says a user or tweet is
//    missing, suspended or protected.
// Messages never contain the bearer token: we never echo request headers, and for 401/403 we do not
// echo the body either. 401, 403 and other 4xx are 'rejected': the operator must fix something (the
// token, the plan, a parameter), so they are neither retried nor reported as an outage.
import { refusedEncoding } from '../outbound-fetch.js';
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

/** The query parameters a 400 names: `errors[].parameters`' keys, else names quoted in its messages. */
export function rejectedParameters(body: unknown): string[] {
  const problem = asObject(body);
  const errors = asArray(problem?.errors).map(asObject).filter((e): e is JsonObject => e !== undefined);
  const names = new Set<string>();
  for (const e of errors) for (const name of Object.keys(asObject(e.parameters) ?? {})) names.add(name);
  if (names.size === 0) {
    const texts = [...errors.map((e) => asString(e.message) ?? ''), asString(problem?.detail) ?? ''];
    for (const text of texts) for (const m of text.matchAll(/[`[]([a-z_]+(?:\.[a-z_]+)?)[`\]] (?:query )?parameter|(?:query )?parameter[s]? [`[]([a-z_]+(?:\.[a-z_]+)?)[`\]]/g)) names.add((m[1] ?? m[2])!);
  }
  return [...names];
}

/** What X said, for logs: the status and the start of the body. */
export interface XAnswer {
  status: number;
  body: unknown;
  /** The raw body, already cleared of our token. */
  text: string;
}

/** The error for a non-2xx answer. */
export function errorFromStatus(answer: XAnswer, what: string, resetAt: Date | undefined): SourceError {
  const { status, body } = answer;
  const upstream = { status, body: clip(answer.text, 500) };
  const problem = asObject(body);
  if (status === 401) {
    return new SourceError('rejected', 'X rejected the bearer token (HTTP 401): check X_BEARER_TOKEN', undefined, upstream);
  }
  if (status === 403) {
    // The problem type says which (client-not-enrolled, unsupported-authentication…); it is a fixed slug, never an echo of the request.
    const kind = problem ? problemKind(problem) : '';
    const why = /^[a-z-]{1,60}$/.test(kind) ? ` (${kind})` : '';
    return new SourceError(
      'rejected',
      `X refused this bearer token access to ${what} (HTTP 403${why}): check X_BEARER_TOKEN and that its app's project and API plan include this endpoint`,
      undefined,
      upstream,
    );
  }
  if (status === 404) return new SourceError('not_found', `X says ${what} does not exist`, undefined, upstream);
  if (status === 429) {
    const when = resetAt ? ` until ${resetAt.toISOString()}` : '';
    return new SourceError('rate_limited', `X's rate limit for ${what} is exhausted${when}`, resetAt, upstream);
  }
  const firstError = asObject(asArray(problem?.errors)[0]);
  const detail = problem ? clip((firstError ? asString(firstError.message) : undefined) || problemText(problem) || asString(problem.message) || '') : '';
  const suffix = detail ? `: ${detail}` : '';
  if (status >= 500) return new SourceError('unavailable', `X failed with HTTP ${status} for ${what}${suffix}`, undefined, upstream);
  // 400, 409, 422…: X refused the request as we made it; retrying the same request will not help.
  const params = status === 400 ? rejectedParameters(body) : [];
  const named = params.length > 0 ? ` (rejected parameter${params.length > 1 ? 's' : ''}: ${params.join(', ')})` : '';
  return new SourceError('rejected', `X refused the request for ${what} with HTTP ${status}${named}${suffix}`, undefined, params.length > 0 ? { ...upstream, parameters: params } : upstream);
}

/** The error for a fetch that threw: the network, or an answer cut off. (Timeouts and aborts are the caller's.) */
export function errorFromFetchFailure(err: unknown, what: string): SourceError {
  if (err instanceof SourceError) return err;
  // X (or what is in front of it) answered, in an encoding we do not read: not an outage.
  const refused = refusedEncoding(err);
  if (refused) return new SourceError('bad_response', `X's answer for ${what} could not be read: ${refused.message}`, undefined, { error: refused.message });
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
  return new SourceError('unavailable', `X could not be reached for ${what}: ${clip(cause)}`, undefined, { error: clip(cause, 500) });
}
