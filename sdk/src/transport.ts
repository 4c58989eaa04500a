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

/** A fetch(input, init) that retries, for openapi-fetch and for downloads. */
export function retryingFetch(opts: TransportOptions): typeof fetch {
  const wait = opts.sleep ?? sleep;
  return async (input, init) => {
    let request = new Request(input, init);
    if (request.method === 'POST' && !request.headers.has('idempotency-key')) {
      const headers = new Headers(request.headers);
      headers.set('idempotency-key', randomUUID());
      request = new Request(request, { headers });
    }
    for (let attempt = 1; ; attempt++) {
      const retriesLeft = attempt <= opts.retry.maxRetries;
      let response: Response;
      // The attempt's own deadline, for the answer's headers only: a body that follows (a page, an
      // export file) is not cut by it. A gateway that never answers is then retried, not waited on for ever.
      const deadline = opts.timeoutMs ? new AbortController() : undefined;
      const timer = deadline && setTimeout(() => deadline.abort(new Error(`no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
      try {
        response = await opts.fetch(deadline ? new Request(request.clone(), { signal: AbortSignal.any([request.signal, deadline.signal]) }) : request.clone());
      } catch (caught) {
        if (request.signal.aborted) throw caught;
        const timedOut = deadline?.signal.aborted === true;
        const error = timedOut ? deadline!.signal.reason : caught;
        // A connection that failed is retried like a 503: a POST carries its key, so it cannot run twice.
        if (!retriesLeft) throw new NetworkError(`Could not reach ${new URL(request.url).origin}: ${describeError(error)}`, { cause: error, timedOut });
        const delayMs = retryDelayMs(attempt, undefined, opts.retry);
        opts.onRetry?.({ attempt, delayMs, error, method: request.method, url: request.url });
        await wait(delayMs, request.signal);
        continue;
      } finally {
        clearTimeout(timer);
      }
      if (!retriesLeft || !opts.retry.statuses.includes(response.status)) return response;
      const after = parseRetryAfter(response.headers.get('retry-after'));
      if (after !== undefined && after * 1000 > opts.retry.maxDelayMs) return response;
      const delayMs = retryDelayMs(attempt, after, opts.retry);
      await response.body?.cancel().catch(() => undefined);
      opts.onRetry?.({ attempt, delayMs, status: response.status, method: request.method, url: request.url });
      await wait(delayMs, request.signal);
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
