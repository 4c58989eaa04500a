// Calls to the data source from background jobs: transient failures are retried with full-jitter
// exponential backoff; a rate limit is waited out until its resetAt (bounded); permanent answers
// (not_found, protected, suspended) are not retried. Every wait ends early when `signal` aborts.
import { SourceError } from './types.js';

export interface RetryPolicy {
  /** Retries after the first attempt for 'unavailable', 'timeout' and 'bad_response'. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A rate limit whose reset is further away than this fails the call instead of waiting. */
  maxRateLimitWaitMs: number;
  /** How many rate-limit waits one call may do. */
  maxRateLimitWaits: number;
}

export const defaultRetryPolicy: RetryPolicy = { retries: 3, baseDelayMs: 500, maxDelayMs: 10_000, maxRateLimitWaitMs: 120_000, maxRateLimitWaits: 5 };

const TRANSIENT = new Set(['unavailable', 'timeout', 'bad_response']);

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason as Error);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function isPermanent(err: unknown): boolean {
  return err instanceof SourceError && (err.kind === 'not_found' || err.kind === 'protected' || err.kind === 'suspended');
}

export async function callSource<T>(fn: () => Promise<T>, policy: RetryPolicy, signal: AbortSignal): Promise<T> {
  let failures = 0;
  let waits = 0;
  for (;;) {
    signal.throwIfAborted();
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      if (err.kind === 'rate_limited') {
        const waitMs = Math.max(0, (err.resetAt?.getTime() ?? Date.now() + 1_000) - Date.now()) + 50;
        if (waits >= policy.maxRateLimitWaits || waitMs > policy.maxRateLimitWaitMs) throw err;
        waits++;
        await sleep(waitMs, signal);
        continue;
      }
      if (!TRANSIENT.has(err.kind) || failures >= policy.retries) throw err;
      failures++;
      await sleep(Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failures - 1)), signal);
    }
  }
}
