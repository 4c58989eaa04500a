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
  ) {
    super(message);
  }
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

export async function api<T>(path: string, opts: { method?: string; body?: unknown; key?: string } = {}): Promise<T> {
  const key = opts.key ?? session.key() ?? '';
  const headers: Record<string, string> = { 'x-api-key': key, accept: 'application/json' };
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method: opts.method ?? 'GET',
      headers,
      body: opts.body === undefined ? null : JSON.stringify(opts.body),
      cache: 'no-store',
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
    });
  } catch {
    throw new ApiError(0, 'network', 'The gateway could not be reached. Check your connection and try again.');
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const e = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    const err = new ApiError(res.status, e?.code ?? `http_${res.status}`, e?.message ?? `The gateway answered ${res.status}.`);
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
