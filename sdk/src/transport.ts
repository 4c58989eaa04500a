// The fetch under the client: retries 429 and 503 (and connection failures) honouring Retry-After,
// with jitter and a cap, and gives every POST an Idempotency-Key that its retries reuse, so a POST
// whose answer was lost is replayed by the gateway instead of done twice.
import { randomUUID } from 'node:crypto';
import { NetworkError } from './errors.js';
import { parseRetryAfter } from './retry-after.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 4; 0 turns retrying off). */
  maxRetries?: number | undefined;
  /** First backoff when the answer has no Retry-After, doubled each retry (default 500 ms). */
  baseDelayMs?: number | undefined;
  /** The longest single wait (default 30 s). A Retry-After beyond it is not waited for: the error is thrown. */
  maxDelayMs?: number | undefined;
  /** Random extra wait added to each delay, up to this fraction of it (default 0.2), so clients spread out. */
  jitter?: number | undefined;
  /** Statuses retried (default 429 and 503). */
  statuses?: number[] | undefined;
}

/** What a retry looks like, for logging or progress. */
export interface RetryEvent {
  /** 1 for the first retry. */
  attempt: number;
  /** How long the client waits before it (Retry-After, or the backoff). */
  delayMs: number;
  /** The answer's status (429, 503) when there was one. */
  status?: number;
  /** The failure when there was no answer (a dropped connection, a timeout). */
  error?: unknown;
  method: string;
  url: string;
}

export interface TransportOptions {
  fetch: typeof fetch;
  retry: ResolvedRetry;
  onRetry?: (event: RetryEvent) => void;
  /** How long an attempt waits for the answer's headers before it is retried like a dropped connection (0: no limit). */
  timeoutMs?: number;
  /** Test seam for the waits. */
  sleep?: (ms: number, signal?: AbortSignal | null) => Promise<void>;
}

/** How long an attempt waits for an answer's headers (and a download for its next bytes) by default. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** RetryOptions with every value given. */
export type ResolvedRetry = { [K in keyof RetryOptions]-?: NonNullable<RetryOptions[K]> };

/** The retry settings: `given`'s values where set (an undefined one keeps the default). */
export function resolveRetry(given: RetryOptions | undefined): ResolvedRetry {
  const out = { ...defaultRetry };
  for (const [k, v] of Object.entries(given ?? {})) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

export const defaultRetry: ResolvedRetry = { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 30_000, jitter: 0.2, statuses: [429, 503] };

export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The wait before retry number `attempt` (1-based): Retry-After when given, else exponential backoff; plus jitter. */
export function retryDelayMs(attempt: number, retryAfterSeconds: number | undefined, retry: ResolvedRetry, random: () => number = Math.random): number {
  const base = retryAfterSeconds !== undefined ? retryAfterSeconds * 1000 : retry.baseDelayMs * 2 ** (attempt - 1);
  // Jitter only adds (waiting less than Retry-After would be refused again), within the cap.
  return Math.round(Math.min(retry.maxDelayMs, base * (1 + retry.jitter * random())));
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
    // The caller's signal itself, listened to directly. Each attempt gets a signal of its own, and
    // its request is given as a URL and options: a Request made from another Request (as a clone
    // is) follows the other's signal through a link Node 20's collector may drop mid-call, after
    // which an abort never reached the attempt (AbortSignal.timeout(400): a call waited for ever).
    const caller = init?.signal ?? (input instanceof Request ? input.signal : undefined) ?? undefined;
    const first = new Request(input, init);
    const headers = new Headers(first.headers);
    if (first.method === 'POST' && !headers.has('idempotency-key')) headers.set('idempotency-key', randomUUID());
    const { url, method, redirect } = first;
    // Read once, sent again by a retry (bodies here are small JSON; downloads have none).
    const body = first.body === null ? undefined : await first.arrayBuffer();
    for (let attempt = 1; ; attempt++) {
      const retriesLeft = attempt <= opts.retry.maxRetries;
      let response: Response;
      const attemptAbort = new AbortController();
      const onAbort = () => attemptAbort.abort(caller!.reason);
      if (caller?.aborted) attemptAbort.abort(caller.reason);
      caller?.addEventListener('abort', onAbort, { once: true });
      // The attempt's own deadline, for the answer's headers only: a body that follows (a page, an
      // export file) is not cut by it. A gateway that never answers is then retried, not waited on for ever.
      let timedOut = false;
      const timer = opts.timeoutMs
        ? setTimeout(() => {
            timedOut = true;
            attemptAbort.abort(new Error(`no answer within ${opts.timeoutMs} ms`));
          }, opts.timeoutMs)
        : undefined;
      try {
        response = await opts.fetch(url, { method, headers, redirect, signal: attemptAbort.signal, ...(body === undefined ? {} : { body }) });
      } catch (caught) {
        if (caller?.aborted) throw caught;
        const error = timedOut ? attemptAbort.signal.reason : caught;
        // A connection that failed is retried like a 503: a POST carries its key, so it cannot run twice.
        if (!retriesLeft) throw new NetworkError(`Could not reach ${new URL(url).origin}: ${describeError(error)}`, { cause: error, timedOut });
        const delayMs = retryDelayMs(attempt, undefined, opts.retry);
        opts.onRetry?.({ attempt, delayMs, error, method, url });
        await wait(delayMs, caller);
        continue;
      } finally {
        clearTimeout(timer);
        // Not left on a signal the caller may give many calls. Once the headers are in, a body is
        // stopped by whoever reads it (the SDK's download: its pipeline's signal).
        caller?.removeEventListener('abort', onAbort);
      }
      if (!retriesLeft || !opts.retry.statuses.includes(response.status)) return response;
      const after = parseRetryAfter(response.headers.get('retry-after'));
      if (after !== undefined && after * 1000 > opts.retry.maxDelayMs) return response;
      const delayMs = retryDelayMs(attempt, after, opts.retry);
      await response.body?.cancel().catch(() => undefined);
      opts.onRetry?.({ attempt, delayMs, status: response.status, method, url });
      await wait(delayMs, caller);
    }
  };
}

/** An error's message with its cause's, for one line. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
