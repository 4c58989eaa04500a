// What SdgClient's methods stand on: its options (the key kept out of logs), the fetches under
// openapi-fetch (charged calls, free calls, download links), and turning an answer into a Result or
// a typed error.
import { randomUUID } from 'node:crypto';
import createClient, { type Client } from 'openapi-fetch';
import { apiErrorFrom } from './error-codes.js';
import { isAbort, NetworkError, SdgError, UnreadableAnswerError } from './errors.js';
import type { IterateOptions } from './paginate.js';
import { metaOf, type Result } from './result.js';
import type { paths } from './schema.js';
import { DEFAULT_TIMEOUT_MS, describeError, resolveRetry, retryingFetch, type RetryEvent, type RetryOptions } from './transport.js';
import type { OperationId, Page, QueryOf } from './types.js';

export interface SdgClientOptions {
  /** The API key (sent as X-API-Key). Never printed: console.log and JSON.stringify of the client show it redacted. */
  apiKey: string;
  /** The gateway's base URL, e.g. http://127.0.0.1:8080 (no user name or password in it). */
  baseUrl: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch | undefined;
  /** What is retried; see RetryOptions (`retryCharged` to also retry charged calls whose answer was lost, paying twice). */
  retry?: RetryOptions | undefined;
  /** Called before each retry's wait. */
  onRetry?: ((event: RetryEvent) => void) | undefined;
  /**
   * How long an attempt waits for the answer's headers, then for each next bytes of its body
   * (default 60,000 ms; 0: no limit). An attempt that gets nothing in time is given up: retried when
   * that cannot charge twice (a free call; a POST, by its Idempotency-Key), else NetworkError
   * (`maybeCharged`). An export download whose bytes stop coming for this long is resumed.
   */
  timeoutMs?: number | undefined;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
}

export interface PostOptions extends CallOptions {
  /** The Idempotency-Key to send (default: a new UUID per call, reused by its retries; errors carry it as `idempotencyKey`). */
  idempotencyKey?: string | undefined;
}

type OptionalKeys<T> = { [K in keyof T]-?: Record<never, never> extends Pick<T, K> ? K : never }[keyof T];
/** T whose optional properties also take `undefined` as "not given" (for exactOptionalPropertyTypes). */
export type Loose<T> = { [K in Exclude<keyof T, OptionalKeys<T>>]: T[K] } & { [K in OptionalKeys<T>]?: T[K] | undefined };

/** An operation's query parameters, any optional one given as undefined being "not given". */
export type QueryOptions<O extends OperationId> = Loose<QueryOf<O>>;
/** One page's query of a list operation: its filters, `limit` and `cursor`. */
export type PageQuery<O extends OperationId> = Loose<Omit<QueryOf<O>, 'cursor'>> & { cursor?: string | undefined };
/** A whole list's options: its filters and `limit`, where to start and stop (IterateOptions), and a signal. */
export type ListOptions<O extends OperationId> = Loose<Omit<QueryOf<O>, 'cursor'>> & IterateOptions & CallOptions;

interface Fetched<B> {
  data?: B;
  error?: unknown;
  response: Response;
}

const INSPECT = Symbol.for('nodejs.util.inspect.custom');

export class ClientCore {
  /** The typed openapi-fetch client underneath, for anything the methods do not cover (its GETs are treated as charged). */
  readonly api: Client<paths>;
  /**
   * The retrying fetch without the API key, for export download links (which need none). It treats
   * every request as free: one whose answer was lost is sent again.
   */
  readonly fetch: typeof fetch;
  /** The per-attempt deadline in effect (options.timeoutMs, or the default). */
  readonly timeoutMs: number;
  /** Per-call options of the calls that charge nothing: retried even after a lost answer. */
  protected readonly free: { fetch: typeof fetch };
  // Private, not an enumerable field: console.log(client) and JSON.stringify(client) never show the key.
  readonly #options: SdgClientOptions;

  constructor(options: SdgClientOptions) {
    if (!options.apiKey) throw new SdgError('SdgClient needs an apiKey.');
    if (!options.baseUrl) throw new SdgError('SdgClient needs a baseUrl.');
    checkBaseUrl(options.baseUrl);
    this.#options = options;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const common = { fetch: options.fetch ?? globalThis.fetch, retry: resolveRetry(options.retry), onRetry: options.onRetry, timeoutMs: this.timeoutMs };
    this.fetch = retryingFetch({ ...common, free: true });
    this.free = { fetch: retryingFetch({ ...common, free: true, readBody: true }) };
    this.api = createClient<paths>({ baseUrl: options.baseUrl, fetch: retryingFetch({ ...common, readBody: true }), headers: { 'x-api-key': options.apiKey } });
  }

  /** The options the client was made with (the API key among them: keep them out of logs). */
  get options(): Readonly<SdgClientOptions> {
    return this.#options;
  }

  /** What JSON.stringify prints: where the client points, the key redacted. */
  toJSON(): Record<string, unknown> {
    return { baseUrl: this.#options.baseUrl, apiKey: redacted(this.#options.apiKey), timeoutMs: this.timeoutMs };
  }

  /** What console.log and util.inspect print. */
  [INSPECT](): string {
    return `SdgClient ${JSON.stringify(this.toJSON())}`;
  }

  /** The key for a POST: the caller's, or a new one that the retries and the error carry. */
  protected keyFor(o: PostOptions): string {
    return o.idempotencyKey || randomUUID();
  }

  /** Awaits an openapi-fetch call: the body of a 2xx, else the typed error (with the POST's key). */
  protected async send<B>(call: Promise<Fetched<B>>, o: CallOptions, key?: string): Promise<{ body: B; response: Response }> {
    try {
      let r: Fetched<B>;
      try {
        r = await call;
      } catch (error) {
        // The caller's own reason, as given (abort(new Error('cancelled')) is not a network failure).
        if (o.signal?.aborted) throw o.signal.reason;
        if (error instanceof SdgError || isAbort(error)) throw error;
        throw new NetworkError(`Request to ${new URL(this.#options.baseUrl).origin} failed: ${describeError(error)}`, { cause: error });
      }
      if (!r.response.ok) throw apiErrorFrom(r.response, r.error);
      if (r.data === undefined || r.data === null) {
        const meta = metaOf(r.response);
        throw new UnreadableAnswerError(`The gateway answered HTTP ${r.response.status} without a body; the call went through${meta.credits ? `: ${meta.credits.charged} credits charged` : ''}.`, meta);
      }
      return { body: r.data, response: r.response };
    } catch (error) {
      if (error instanceof SdgError) error.idempotencyKey ??= key;
      throw error;
    }
  }

  protected async single<D>(call: Promise<Fetched<{ data: D }>>, o: CallOptions, key?: string): Promise<Result<D>> {
    const { body, response } = await this.send(call, o, key);
    if (body.data === undefined) throw unreadable(response, 'without its `data`');
    return { ...metaOf(response), data: body.data };
  }

  protected async page<T>(call: Promise<Fetched<{ items: T[]; hasNextPage: boolean; nextCursor: string | null; cached: boolean }>>, o: CallOptions): Promise<Result<Page<T>>> {
    const { body, response } = await this.send(call, o);
    if (!Array.isArray(body.items)) throw unreadable(response, 'without its `items`');
    return { ...metaOf(response), data: { items: body.items, hasNextPage: body.hasNextPage, nextCursor: body.nextCursor, cached: body.cached } };
  }
}

function unreadable(response: Response, what: string): UnreadableAnswerError {
  const meta = metaOf(response);
  return new UnreadableAnswerError(`The gateway answered HTTP ${response.status} ${what}; the call went through${meta.credits ? `: ${meta.credits.charged} credits charged` : ''}.`, meta);
}

const redacted = (key: string) => (key ? '[redacted]' : '');

/** A base URL fetch can use; one with a user name or password is refused without echoing them. */
function checkBaseUrl(baseUrl: string): void {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw new SdgError('SdgClient: baseUrl is not a URL.');
  }
  if (u.username || u.password) {
    throw new SdgError(`SdgClient: baseUrl must not hold a user name or password (${u.protocol}//…@${u.host}): the gateway takes the key as X-API-Key.`);
  }
}

/** Splits a list method's options into the query, the iteration and the per-call options. */
export function split<Q extends object>(o: Q & IterateOptions & CallOptions): { query: Omit<Q, keyof IterateOptions | keyof CallOptions>; iterate: IterateOptions; call: CallOptions } {
  const { maxItems, cursor, signal, ...query } = o;
  return { query, iterate: { maxItems, cursor }, call: { signal } };
}
