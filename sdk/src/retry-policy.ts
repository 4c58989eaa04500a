// What is retried and how long the client waits: the options, the backoff, and which failures prove
// that a request never left (so that repeating it cannot charge it twice).

export interface RetryOptions {
  /** Retries after the first attempt (default 4; 0 turns retrying off). */
  maxRetries?: number | undefined;
  /** First backoff when the answer has no Retry-After, doubled each retry (default 500 ms). */
  baseDelayMs?: number | undefined;
  /** The longest single wait (default 30 s). A Retry-After beyond it is not waited for: the error is thrown. */
  maxDelayMs?: number | undefined;
  /** Random extra wait added to each delay, up to this fraction of it (default 0.2), so clients spread out. */
  jitter?: number | undefined;
  /** Statuses retried (default 429 and 503: answers that charged nothing). */
  statuses?: number[] | undefined;
  /**
   * Also retry a charged call (a GET that costs credits) after a failure that may have reached the
   * gateway: an answer lost after it was sent, or none within timeoutMs. The gateway may have
   * answered and charged the first attempt, so the call may be PAID TWICE (and the result reports
   * one charge). Default false: such a failure is thrown as NetworkError with `maybeCharged`.
   */
  retryCharged?: boolean | undefined;
}

/** What a retry looks like, for logging or progress. */
export interface RetryEvent {
  /** 1 for the first retry. */
  attempt: number;
  /** How long the client waits before it (Retry-After, or the backoff). */
  delayMs: number;
  /** The answer's status (429, 503; 409 for a POST whose first attempt is still running) when there was one. */
  status?: number;
  /** The failure when there was no answer (a dropped connection, a timeout). */
  error?: unknown;
  method: string;
  url: string;
}

/** How long an attempt waits for an answer's headers (and for the next bytes of its body) by default. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** RetryOptions with every value given. */
export type ResolvedRetry = { [K in keyof RetryOptions]-?: NonNullable<RetryOptions[K]> };

export const defaultRetry: ResolvedRetry = { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 30_000, jitter: 0.2, statuses: [429, 503], retryCharged: false };

/** The retry settings: `given`'s values where set (an undefined one keeps the default). */
export function resolveRetry(given: RetryOptions | undefined): ResolvedRetry {
  const out = { ...defaultRetry };
  for (const [k, v] of Object.entries(given ?? {})) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

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

// Failures before a byte of the request was sent: no connection was made (refused, unreachable, no
// such host) or TLS refused it. A reset, a closed socket or a timeout may come after the gateway
// got the request, and is not here.
const UNSENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT', 'EPROTO']);
const TLS_CODE = /^(CERT_|ERR_TLS_|ERR_SSL_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED|SELF_SIGNED_CERT)/;

/** Whether a fetch failure proves the request never reached the server (so it charged nothing). */
export function neverSent(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const errors = (e as { errors?: unknown }).errors;
    // Several addresses tried (IPv6 and IPv4): unsent only if every one was.
    if (Array.isArray(errors) && errors.length > 0) return errors.every(neverSent);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (UNSENT_CODES.has(code) || TLS_CODE.test(code))) return true;
    // fetch's own refusal of a port it blocks, before any connection.
    if ((e as { message?: unknown }).message === 'bad port') return true;
  }
  return false;
}

/** An error's message with its cause's, for one line. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
