// Every call to the gateway: the key from this tab's sessionStorage in the X-API-Key header (never in
// a URL), the error envelope turned into an ApiError whose message a person can act on.
const KEY = 'sdg.dashboard.apiKey';

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  save: (key: string): void => sessionStorage.setItem(KEY, key),
  clear: (): void => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The envelope's details (a 400's fields), as sent. */
    readonly details?: unknown,
    /** Seconds from Retry-After (a 429 or 503), when the gateway sent one. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** A call that gets no answer at all in this time is given up, so no page waits for ever. */
export const TIMEOUT_MS = 20_000;

/**
 * Why `key` cannot be an API key, or undefined. Keys are printable ASCII; a browser refuses to send a
 * header holding anything else (curly quotes, a zero-width space picked up when copying), and would
 * report that as the gateway being unreachable.
 */
export function keyProblem(key: string): string | undefined {
  const odd = [...key].find((c) => !/[\x21-\x7e]/.test(c));
  if (odd === undefined) return undefined;
  const code = `U+${odd.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  const what = /\s/u.test(odd) ? `a space or line break (${code})` : /\p{Cf}/u.test(odd) ? `an invisible character (${code})` : `the character ${odd} (${code})`;
  return `This is not a valid API key: it holds ${what}, and a key is only plain letters, digits and signs. Quotes or invisible characters come along when a key is copied from some documents: copy it again, from its first character to its last.`;
}

/** Called when the gateway refuses the session's key (revoked meanwhile, say): the app signs out. */
let onRefused: (e: ApiError) => void = () => undefined;
/** Signs this tab out with `reason` (the page knows the key is gone: it revoked it itself). */
export function signOutBecause(reason: string): void {
  onRefused(new ApiError(401, 'signed_out', reason));
}

export function whenKeyRefused(fn: (e: ApiError) => void): void {
  onRefused = fn;
}

export interface Single<T> {
  data: T;
}
export interface Page<T> {
  items: T[];
  hasNextPage: boolean;
  nextCursor: string | null;
}

/** Retry-After in seconds: a number of seconds or an HTTP date. */
function retryAfterOf(res: Response): number | undefined {
  const v = res.headers.get('retry-after');
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

export async function api<T>(path: string, opts: { method?: string; body?: unknown; key?: string } = {}): Promise<T> {
  const key = opts.key ?? session.key() ?? '';
  // An empty key is sent as such: the gateway's 401 signs the tab out.
  const bad = keyProblem(key);
  if (bad) throw new ApiError(0, 'invalid_key', bad);
  const headers: Record<string, string> = { 'x-api-key': key, accept: 'application/json' };
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  // A timer of the page's own (not AbortSignal.timeout), so that it covers reading the body too.
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), TIMEOUT_MS);
  let res: Response;
  let text: string;
  try {
    res = await fetch(path, {
      method: opts.method ?? 'GET',
      headers,
      body: opts.body === undefined ? null : JSON.stringify(opts.body),
      cache: 'no-store',
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
      signal: abort.signal,
    });
    text = await res.text();
  } catch {
    if (abort.signal.aborted) throw new ApiError(0, 'timeout', `The gateway did not answer within ${TIMEOUT_MS / 1000} seconds. Check your connection and try again.`);
    throw new ApiError(0, 'network', 'The gateway could not be reached. Check your connection and try again.');
  } finally {
    clearTimeout(timer);
  }
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const e = (body as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
    const err = new ApiError(res.status, e?.code ?? `http_${res.status}`, e?.message ?? `The gateway answered ${res.status}.`, e?.details, retryAfterOf(res));
    if (res.status === 401 && opts.key === undefined) onRefused(err);
    throw err;
  }
  return body as T;
}

/** A query string from the defined values only. */
export function query(params: Record<string, string | number | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
