// SdgClient: one method per operation of the gateway's API, typed from the generated schema
// (src/schema.d.ts), on openapi-fetch over a fetch that retries (transport.ts).
import createClient, { type Client } from 'openapi-fetch';
import { apiErrorFrom, isAbort, NetworkError, SdgError } from './errors.js';
import { downloadExport, exportToFile, type DownloadOptions, type DownloadedExport, type ExportToFileOptions } from './export-file.js';
import { Paginator, pageLimit, type IterateOptions } from './paginate.js';
import { metaOf, type Result } from './result.js';
import type { paths } from './schema.js';
import { DEFAULT_TIMEOUT_MS, resolveRetry, retryingFetch, type RetryEvent, type RetryOptions } from './transport.js';
import type {
  Account,
  ApiKey,
  Balance,
  Batch,
  BodyOf,
  Community,
  CrawlStatus,
  ExportDownload,
  ExportRecord,
  Hello,
  LedgerEntry,
  NewApiKey,
  OperationId,
  Page,
  Plans,
  QueryOf,
  SocialProfile,
  Tweet,
  UsageSummary,
  WalletBalance,
  WatchlistAddItem,
  WatchlistEntry,
} from './types.js';
import { addAllToWatchlist, waitForBatch, waitForExport, type AddAllOptions, type AddAllResult, type WaitOptions } from './wait.js';

export interface SdgClientOptions {
  /** The API key (sent as X-API-Key). */
  apiKey: string;
  /** The gateway's base URL, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch | undefined;
  /** Retries of 429 and 503; see RetryOptions. */
  retry?: RetryOptions | undefined;
  /** Called before each retry's wait. */
  onRetry?: ((event: RetryEvent) => void) | undefined;
  /**
   * How long an attempt waits for the answer's headers (default 60,000 ms; 0: no limit). One that
   * gets none in time is given up and retried like a dropped connection (a POST keeps its
   * Idempotency-Key, so it cannot run twice); the body that follows is not timed, except that an
   * export download whose bytes stop coming for this long is resumed.
   */
  timeoutMs?: number | undefined;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
}

export interface PostOptions extends CallOptions {
  /** The Idempotency-Key to send (default: a new UUID per call, reused by its retries). */
  idempotencyKey?: string | undefined;
}

/** One page's query of a list operation: its filters, `limit` and `cursor`. */
export type PageQuery<O extends OperationId> = Omit<QueryOf<O>, 'cursor'> & { cursor?: string | undefined };
/** A whole list's options: its filters and `limit`, where to start and stop (IterateOptions), and a signal. */
export type ListOptions<O extends OperationId> = Omit<QueryOf<O>, 'cursor'> & IterateOptions & CallOptions;

interface Fetched<B> {
  data?: B;
  error?: unknown;
  response: Response;
}

/** Which method of SdgClient calls each operation of the API (the compiler checks none is missing). */
export const operationMethods: Record<OperationId, keyof SdgClient> = {
  getCreditsBalance: 'balance',
  createApiKey: 'createKey',
  listApiKeys: 'keys',
  revokeApiKey: 'revokeKey',
  listPlans: 'plans',
  listUsage: 'usage',
  getUsageSummary: 'usageSummary',
  getAccount: 'account',
  getUserByUsername: 'userByUsername',
  getTweet: 'tweet',
  getRetweeters: 'retweeters',
  getUserTweets: 'userTweets',
  getCommunity: 'community',
  generateExport: 'generateExport',
  addWatchlistBatch: 'addToWatchlist',
  removeWatchlistBatch: 'removeFromWatchlist',
  getWatchlistBatch: 'batch',
  getExportDownload: 'exportDownload',
  getLatestExport: 'latestExport',
  getExport: 'getExport',
  getCrawlStatus: 'crawlStatus',
  listExports: 'exports',
  listWatchlist: 'watchlist',
  echoHello: 'hello',
  getWalletBalance: 'walletBalance',
};

export class SdgClient {
  /** The typed openapi-fetch client underneath, for anything the methods do not cover. */
  readonly api: Client<paths>;
  /** The retrying fetch without the API key (export download links need none). */
  readonly fetch: typeof fetch;

  /** The per-attempt deadline in effect (options.timeoutMs, or the default). */
  readonly timeoutMs: number;

  constructor(readonly options: SdgClientOptions) {
    if (!options.apiKey) throw new SdgError('SdgClient needs an apiKey.');
    if (!options.baseUrl) throw new SdgError('SdgClient needs a baseUrl.');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.fetch = retryingFetch({ fetch: options.fetch ?? globalThis.fetch, retry: resolveRetry(options.retry), onRetry: options.onRetry, timeoutMs: this.timeoutMs });
    this.api = createClient<paths>({ baseUrl: options.baseUrl, fetch: this.fetch, headers: { 'x-api-key': options.apiKey } });
  }

  // ---- account ----

  /** The account's credit balance (free). */
  balance(o: CallOptions = {}): Promise<Result<Balance>> {
    return this.single(this.api.GET('/api/v1/credits/balance', { signal: o.signal }));
  }

  /** The calling account: its plan, rate limit and balance (free). */
  account(o: CallOptions = {}): Promise<Result<Account>> {
    return this.single(this.api.GET('/api/v1/account', { signal: o.signal }));
  }

  /** Calls and credits per endpoint per hour or day over [from, to), from the ledger (free). */
  usageSummary(q: QueryOf<'getUsageSummary'>, o: CallOptions = {}): Promise<Result<UsageSummary>> {
    return this.single(this.api.GET('/api/v1/usage/summary', { params: { query: q }, signal: o.signal }));
  }

  /** The plans on offer (free). */
  plans(o: CallOptions = {}): Promise<Result<Plans>> {
    return this.single(this.api.GET('/api/v1/payments/plans', { signal: o.signal }));
  }

  /**
   * A new API key for the account; `data.key` is the secret, shown only here. It is null when the
   * answer is a replay (`replayed`: the same Idempotency-Key, e.g. this call's own retry after an
   * answer was lost): the key exists but its secret was never kept, so revoke it by `data.id` and
   * create another.
   */
  createKey(body: BodyOf<'createApiKey'> = {}, o: PostOptions = {}): Promise<Result<NewApiKey>> {
    return this.single(this.api.POST('/api/v1/api-keys', { body, signal: o.signal, headers: idem(o) }));
  }

  /** One page of the account's keys, newest first, never their secrets. */
  keysPage(q: PageQuery<'listApiKeys'> = {}, o: CallOptions = {}): Promise<Result<Page<ApiKey>>> {
    return this.page(this.api.GET('/api/v1/api-keys', { params: { query: q }, signal: o.signal }));
  }

  /** All the account's keys, revoked ones included. */
  keys(o: ListOptions<'listApiKeys'> = {}): Paginator<ApiKey> {
    const { query, iterate, call } = split(o);
    return new Paginator((cursor, atMost) => this.keysPage({ ...query, limit: pageLimit(query.limit, 100, atMost), cursor }, call), iterate);
  }

  /** Revokes a key; it stops working at once. */
  revokeKey(id: string, o: CallOptions = {}): Promise<Result<ApiKey>> {
    return this.single(this.api.DELETE('/api/v1/api-keys/{id}', { params: { path: { id } }, signal: o.signal }));
  }

  /** One page of the account's ledger, newest first. */
  usagePage(q: PageQuery<'listUsage'> = {}, o: CallOptions = {}): Promise<Result<Page<LedgerEntry>>> {
    return this.page(this.api.GET('/api/v1/usage', { params: { query: q }, signal: o.signal }));
  }

  /** The whole ledger, newest first. */
  usage(o: ListOptions<'listUsage'> = {}): Paginator<LedgerEntry> {
    const { query, iterate, call } = split(o);
    return new Paginator((cursor, atMost) => this.usagePage({ ...query, limit: pageLimit(query.limit, 20, atMost), cursor }, call), iterate);
  }

  // ---- social (charged) ----

  /** A profile by username. */
  userByUsername(username: string, o: CallOptions = {}): Promise<Result<SocialProfile>> {
    return this.single(this.api.GET('/social/v1/users/by/username/{username}', { params: { path: { username } }, signal: o.signal }));
  }

  /** A tweet by id. */
  tweet(id: string, o: CallOptions = {}): Promise<Result<Tweet>> {
    return this.single(this.api.GET('/social/v1/tweets/{id}', { params: { path: { id } }, signal: o.signal }));
  }

  /** A community by id. */
  community(id: string, o: CallOptions = {}): Promise<Result<Community>> {
    return this.single(this.api.GET('/social/v1/communities/{id}', { params: { path: { id } }, signal: o.signal }));
  }

  /** One page of a user's tweets, newest first; `startTime`, `endTime`, `sinceId`, `untilId` narrow it. */
  userTweetsPage(userId: string, q: PageQuery<'getUserTweets'> = {}, o: CallOptions = {}): Promise<Result<Page<Tweet>>> {
    return this.page(this.api.GET('/social/v1/users/{id}/tweets', { params: { path: { id: userId }, query: q }, signal: o.signal }));
  }

  /** A user's tweets to the end (pages of 100 unless `limit` says otherwise; each page is charged). */
  userTweets(userId: string, o: ListOptions<'getUserTweets'> = {}): Paginator<Tweet> {
    const { query, iterate, call } = split(o);
    return new Paginator((cursor, atMost) => this.userTweetsPage(userId, { ...query, limit: pageLimit(query.limit, 100, atMost), cursor }, call), iterate);
  }

  /** One page of a tweet's retweeters, most recent first. */
  retweetersPage(tweetId: string, q: PageQuery<'getRetweeters'> = {}, o: CallOptions = {}): Promise<Result<Page<SocialProfile>>> {
    return this.page(this.api.GET('/social/v1/tweets/{id}/retweeted_by', { params: { path: { id: tweetId }, query: q }, signal: o.signal }));
  }

  /** A tweet's retweeters to the end (pages of 100 unless `limit` says otherwise). */
  retweeters(tweetId: string, o: ListOptions<'getRetweeters'> = {}): Paginator<SocialProfile> {
    const { query, iterate, call } = split(o);
    return new Paginator((cursor, atMost) => this.retweetersPage(tweetId, { ...query, limit: pageLimit(query.limit, 100, atMost), cursor }, call), iterate);
  }

  // ---- bulk export: watchlist ----

  /** Queues a batch adding up to 100 accounts (by socialUserId and/or username) to the watchlist. */
  addToWatchlist(items: WatchlistAddItem[], o: PostOptions = {}): Promise<Result<Batch>> {
    return this.single(this.api.POST('/social/v1/bulk-export/watchlist/batch', { body: { items }, signal: o.signal, headers: idem(o) }));
  }

  /** Queues a batch removing up to 100 accounts (numeric ids) from the watchlist. */
  removeFromWatchlist(socialUserIds: string[], o: PostOptions = {}): Promise<Result<Batch>> {
    return this.single(this.api.POST('/social/v1/bulk-export/watchlist/batch-remove', { body: { socialUserIds }, signal: o.signal, headers: idem(o) }));
  }

  /** A batch with an outcome per item. */
  batch(batchId: string, o: CallOptions = {}): Promise<Result<Batch>> {
    return this.single(this.api.GET('/social/v1/bulk-export/watchlist/batch/{batchId}', { params: { path: { batchId } }, signal: o.signal }));
  }

  /** Polls a batch until it is completed (or failed), calling `onProgress` with each state. */
  waitForBatch(batchId: string, o: WaitOptions<Batch> = {}): Promise<Batch> {
    return waitForBatch(this, batchId, o);
  }

  /** Adds any number of accounts in batches of 100, waiting for each; outcomes in order. */
  addAllToWatchlist(items: WatchlistAddItem[], o: AddAllOptions = {}): Promise<AddAllResult> {
    return addAllToWatchlist(this, items, o);
  }

  /** One page of the watchlist. */
  watchlistPage(q: PageQuery<'listWatchlist'> = {}, o: CallOptions = {}): Promise<Result<Page<WatchlistEntry>>> {
    return this.page(this.api.GET('/social/v1/bulk-export/watchlist', { params: { query: q }, signal: o.signal }));
  }

  /** The whole watchlist. */
  watchlist(o: ListOptions<'listWatchlist'> = {}): Paginator<WatchlistEntry> {
    const { query, iterate, call } = split(o);
    return new Paginator((cursor, atMost) => this.watchlistPage({ ...query, limit: pageLimit(query.limit, 100, atMost), cursor }, call), iterate);
  }

  /** The crawl's current and last completed cycle and its schedule. */
  async crawlStatus(o: CallOptions = {}): Promise<Result<CrawlStatus>> {
    const { body, response } = await this.send(this.api.GET('/social/v1/bulk-export/crawl-status', { signal: o.signal }));
    return { ...metaOf(response), data: body.data };
  }

  // ---- bulk export: exports ----

  /** Queues an export of the watched accounts' tweets created in [startDate, endDate) (at most 24 h). */
  generateExport(range: BodyOf<'generateExport'>, o: PostOptions = {}): Promise<Result<ExportRecord>> {
    return this.single(this.api.POST('/social/v1/bulk-export/exports/generate', { body: range, signal: o.signal, headers: idem(o) }));
  }

  /** One export in any status. */
  getExport(id: string, o: CallOptions = {}): Promise<Result<ExportRecord>> {
    return this.single(this.api.GET('/social/v1/bulk-export/exports/{id}', { params: { path: { id } }, signal: o.signal }));
  }

  /** The most recently completed export. */
  latestExport(o: CallOptions = {}): Promise<Result<ExportRecord>> {
    return this.single(this.api.GET('/social/v1/bulk-export/exports/latest', { signal: o.signal }));
  }

  /** One page of the account's exports, newest first. */
  exportsPage(q: PageQuery<'listExports'> = {}, o: CallOptions = {}): Promise<Result<Page<ExportRecord>>> {
    return this.page(this.api.GET('/social/v1/bulk-export/exports', { params: { query: q }, signal: o.signal }));
  }

  /** All the account's exports, newest first. */
  exports(o: ListOptions<'listExports'> = {}): Paginator<ExportRecord> {
    const { query, iterate, call } = split(o);
    return new Paginator((cursor, atMost) => this.exportsPage({ ...query, limit: pageLimit(query.limit, 100, atMost), cursor }, call), iterate);
  }

  /** A completed export's download link (needs no key; expires at `expiresAt`). */
  exportDownload(id: string, o: CallOptions = {}): Promise<Result<ExportDownload>> {
    return this.single(this.api.GET('/social/v1/bulk-export/exports/{id}/download', { params: { path: { id } }, signal: o.signal }));
  }

  /** Polls an export until it is completed (throws ExportError if it failed), calling `onProgress` with each state. */
  waitForExport(id: string, o: WaitOptions<ExportRecord> = {}): Promise<ExportRecord> {
    return waitForExport(this, id, o);
  }

  /** Downloads a completed export to `path`, streaming, and checks its size and SHA-256 (ExportError if they differ). */
  downloadExport(id: string, path: string, o: DownloadOptions = {}): Promise<DownloadedExport> {
    return downloadExport(this, id, path, o);
  }

  /** Generates an export, waits for it and downloads it to `path`, verified. */
  exportToFile(range: BodyOf<'generateExport'>, path: string, o: ExportToFileOptions = {}): Promise<DownloadedExport> {
    return exportToFile(this, range, path, o);
  }

  // ---- echo and wallet ----

  /** Says hello with the account's id: a cheap check of the key. */
  hello(o: CallOptions = {}): Promise<Result<Hello>> {
    return this.single(this.api.GET('/echo/v1/hello', { signal: o.signal }));
  }

  /** A wallet's native balance on a configured chain (charged). */
  walletBalance(address: string, q: QueryOf<'getWalletBalance'> = {}, o: CallOptions = {}): Promise<Result<WalletBalance>> {
    return this.single(this.api.GET('/wallet/v1/balance/{address}', { params: { path: { address }, query: q }, signal: o.signal }));
  }

  // ---- plumbing ----

  /** Awaits an openapi-fetch call: the body of a 2xx, else the typed error. */
  private async send<B>(call: Promise<Fetched<B>>): Promise<{ body: B; response: Response }> {
    let r: Fetched<B>;
    try {
      r = await call;
    } catch (error) {
      if (error instanceof SdgError || isAbort(error)) throw error;
      throw new NetworkError(`Request to ${this.options.baseUrl} failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (!r.response.ok || r.data === undefined) throw apiErrorFrom(r.response, r.error);
    return { body: r.data, response: r.response };
  }

  private async single<D>(call: Promise<Fetched<{ data: D }>>): Promise<Result<D>> {
    const { body, response } = await this.send(call);
    return { ...metaOf(response), data: body.data };
  }

  private async page<T>(call: Promise<Fetched<{ items: T[]; hasNextPage: boolean; nextCursor: string | null; cached: boolean }>>): Promise<Result<Page<T>>> {
    const { body, response } = await this.send(call);
    return { ...metaOf(response), data: { items: body.items, hasNextPage: body.hasNextPage, nextCursor: body.nextCursor, cached: body.cached } };
  }
}

function idem(o: PostOptions): Record<string, string> | undefined {
  return o.idempotencyKey ? { 'idempotency-key': o.idempotencyKey } : undefined;
}

/** Splits a list method's options into the query, the iteration and the per-call options. */
function split<Q extends object>(o: Q & IterateOptions & CallOptions): { query: Omit<Q, keyof IterateOptions | keyof CallOptions>; iterate: IterateOptions; call: CallOptions } {
  const { maxItems, cursor, signal, ...query } = o;
  return { query, iterate: { maxItems, cursor }, call: { signal } };
}
