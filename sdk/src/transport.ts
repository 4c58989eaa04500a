// The fetch under the client: retries what provably charged nothing (429 and 503 answers, a
// connection that never opened) honouring Retry-After, with jitter and a cap, and gives every POST
// an Idempotency-Key that its retries reuse, so a POST whose answer was lost is replayed by the
// gateway instead of done twice. A charged GET whose request may have reached the gateway (its
// answer lost, none in time) is not sent again unless the caller accepts paying twice.
import { randomUUID } from 'node:crypto';
import { attemptOnce, type Outcome } from './attempt.js';
import { NetworkError, UnreadableAnswerError, type SdgError } from './errors.js';
import { metaOf } from './result.js';
import { parseRetryAfter } from './retry-after.js';
import { describeError, retryDelayMs, sleep, type ResolvedRetry, type RetryEvent } from './retry-policy.js';

export { DEFAULT_TIMEOUT_MS, defaultRetry, describeError, resolveRetry, retryDelayMs, sleep, type ResolvedRetry, type RetryEvent, type RetryOptions } from './retry-policy.js';

export interface TransportOptions {
  fetch: typeof fetch;
  retry: ResolvedRetry;
  onRetry?: ((event: RetryEvent) => void) | undefined;
  /** How long an attempt waits for the answer's headers, and with readBody for each next bytes of its body (0: no limit). */
  timeoutMs?: number;
  /** Read each answer's body within the deadline (API calls: small JSON, checked to be JSON when 2xx); else stream it (downloads). */
  readBody?: boolean;
  /** The calls made through this fetch charge nothing (free calls, download links): repeating one whose answer was lost costs nothing. */
  free?: boolean;
  /** Test seam for the waits. */
  sleep?: (ms: number, signal?: AbortSignal | null) => Promise<void>;
}

/**
 * What the calls in flight were given, held until each ends. The caller's signal reaches the
 * attempts through the Request openapi-fetch made with it, and Node keeps that signal only while
 * that Request lives: an `AbortSignal.timeout(400)` written inline in a call was collected with it
 * mid-call, and the call then waited for ever (test/sdk/timeout.test.ts, with the collector forced).
 */
const inFlight = new Set<unknown>();

/** A fetch(input, init) that retries, for openapi-fetch and for downloads. */
export function retryingFetch(opts: TransportOptions): typeof fetch {
  const attempts = retryingAttempts(opts);
  return async (input, init) => {
    const held = { input, init };
    inFlight.add(held);
    try {
      return await attempts(input, init);
    } finally {
      inFlight.delete(held);
    }
  };
}

function retryingAttempts(opts: TransportOptions): typeof fetch {
  const wait = opts.sleep ?? sleep;
  return async (input, init) => {
    const caller = init?.signal ?? (input instanceof Request ? input.signal : undefined) ?? undefined;
    const first = new Request(input, init);
    const headers = new Headers(first.headers);
    if (first.method === 'POST' && !headers.has('idempotency-key')) headers.set('idempotency-key', randomUUID());
    const key = first.method === 'POST' ? (headers.get('idempotency-key') ?? undefined) : undefined;
    const { url, method, redirect } = first;
    // Read once, sent again by a retry (bodies here are small JSON; downloads have none).
    const body = first.body === null ? undefined : await first.arrayBuffer();
    // After a failure that may have reached the gateway: a POST is replayed by its key, a free call
    // costs nothing again; a charged call only when the caller accepts paying twice.
    const repeatable = key !== undefined || Boolean(opts.free) || opts.retry.retryCharged;
    const spec = { fetch: opts.fetch, url, init: { method, headers, redirect, ...(body === undefined ? {} : { body }) }, caller, timeoutMs: opts.timeoutMs, readBody: Boolean(opts.readBody) };
    for (let attempt = 1; ; attempt++) {
      const retriesLeft = attempt <= opts.retry.maxRetries;
      const out = await attemptOnce(spec);
      const retry = async (delayMs: number, event: Pick<RetryEvent, 'status' | 'error'>) => {
        opts.onRetry?.({ attempt, delayMs, ...event, method, url });
        await wait(delayMs, caller);
      };
      if (out.kind !== 'answer') {
        if (retriesLeft && ((out.kind === 'failed' && out.unsent) || repeatable)) {
          await retry(retryDelayMs(attempt, undefined, opts.retry), out.kind === 'cut' ? { status: out.response.status, error: out.error } : { error: out.error });
          continue;
        }
        throw withKey(failure(out, { url, key, free: Boolean(opts.free), repeatable, attempts: attempt }), key);
      }
      const { response } = out;
      // The first attempt of this POST is still running at the gateway (this one timed out): its
      // answer comes by the same key once it is done.
      if (retriesLeft && key !== undefined && out.body !== undefined && (await stillRunning(response))) {
        await retry(retryDelayMs(attempt, undefined, opts.retry), { status: response.status });
        continue;
      }
      if (!retriesLeft || !opts.retry.statuses.includes(response.status)) return checked(out, key);
      // A 503 saying the call may have been charged (the gateway lost its storage while charging it)
      // is not sent again unless the caller accepts paying twice: not even a POST by its
      // Idempotency-Key, which the gateway forgets with the failure.
      if (!opts.retry.retryCharged && response.status === 503 && (await saysMaybeCharged(out))) return response;
      const after = parseRetryAfter(response.headers.get('retry-after'));
      if (after !== undefined && after * 1000 > opts.retry.maxDelayMs) return response;
      await response.body?.cancel().catch(() => undefined);
      await retry(retryDelayMs(attempt, after, opts.retry), { status: response.status });
    }
  };
}

function withKey<E extends SdgError>(error: E, key: string | undefined): E {
  error.idempotencyKey ??= key;
  return error;
}

/** The error for an attempt that got no answer, or whose 2xx body was lost, after the retries allowed. */
function failure(out: Exclude<Outcome, { kind: 'answer' }>, o: { url: string; key: string | undefined; free: boolean; repeatable: boolean; attempts: number }): SdgError {
  if (out.kind === 'cut') {
    const meta = metaOf(out.response);
    return new UnreadableAnswerError(`The gateway answered HTTP ${out.response.status} but its body did not come in full (${describeError(out.error)}); ${wentThrough(meta.credits?.charged)}${again(o)}`, {
      status: out.response.status,
      requestId: meta.requestId,
      credits: meta.credits,
      cause: out.error,
      timedOut: out.timedOut,
    });
  }
  const maybeCharged = !out.unsent && !o.free;
  let said = `Could not reach ${new URL(o.url).origin}: ${describeError(out.error)}.`;
  if (maybeCharged && o.key !== undefined) said += ` The request may have reached the gateway and been done: send it again with Idempotency-Key ${o.key} to get its answer without doing it twice.`;
  else if (maybeCharged && !o.repeatable) said += ' The request may have reached the gateway and been charged, so it was not sent again (retry.retryCharged would, at the risk of paying twice).';
  else if (maybeCharged) said += ` Each of the ${o.attempts} attempts may have reached the gateway and been charged.`;
  return new NetworkError(said, { cause: out.error, timedOut: out.timedOut, maybeCharged });
}

const wentThrough = (charged: number | undefined) => `the call went through${charged === undefined ? ' and may have been charged' : `: ${charged} credits charged`}.`;
const again = (o: { key: string | undefined; repeatable: boolean }) =>
  o.key !== undefined ? ` Send it again with Idempotency-Key ${o.key} to get its answer without doing it twice.` : o.repeatable ? '' : ' It was not sent again, not to pay twice.';

/** A 2xx API answer that is not JSON is not handed on as if it were: it is unreadable, but went through. */
function checked(out: Extract<Outcome, { kind: 'answer' }>, key: string | undefined): Response {
  const { response, body } = out;
  if (body === undefined || !response.ok || body.length === 0) return response;
  try {
    JSON.parse(Buffer.from(body).toString('utf8'));
    return response;
  } catch (error) {
    const meta = metaOf(response);
    const type = response.headers.get('content-type') ?? 'no Content-Type';
    throw withKey(
      new UnreadableAnswerError(`The gateway answered HTTP ${response.status} with a body that is not JSON (${type}); ${wentThrough(meta.credits?.charged)}`, {
        status: response.status,
        requestId: meta.requestId,
        credits: meta.credits,
        cause: error,
      }),
      key,
    );
  }
}

/** A 409 idempotency_conflict that says the key's first request is still running (not: used for another body). */
async function stillRunning(response: Response): Promise<boolean> {
  if (response.status !== 409) return false;
  const env = (await response
    .clone()
    .json()
    .catch(() => undefined)) as { error?: { code?: unknown; message?: unknown } } | undefined;
  // The gateway tells the two apart only by the message (src/credits/idempotency.ts).
  return env?.error?.code === 'idempotency_conflict' && typeof env.error.message === 'string' && /still being processed/i.test(env.error.message);
}

/** Whether an error answer's details say the call may have been charged (details.maybeCharged). */
async function saysMaybeCharged(out: Extract<Outcome, { kind: 'answer' }>): Promise<boolean> {
  try {
    const text = out.body !== undefined ? Buffer.from(out.body).toString('utf8') : await out.response.clone().text();
    return (JSON.parse(text) as { error?: { details?: { maybeCharged?: unknown } } }).error?.details?.maybeCharged === true;
  } catch {
    return false;
  }
}
