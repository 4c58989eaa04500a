// SdgClient: one method per operation of the gateway's API, typed from the generated schema
// (src/schema.d.ts), on openapi-fetch over a fetch that retries (transport.ts).
export type { CallOptions, ListOptions, Loose, PageQuery, PostOptions, QueryOptions, SdgClientOptions } from './client-core.js';
import { ClientCore, split, type CallOptions, type ListOptions, type Loose, type PageQuery, type PostOptions, type QueryOptions } from './client-core.js';
import { downloadExport, exportToFile, type DownloadOptions, type DownloadedExport, type ExportToFileOptions } from './export-file.js';
import { Paginator, pageLimit } from './paginate.js';
import type { Result } from './result.js';
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
  CreatedKey,
  OperationId,
  Page,
  Plans,
  SocialProfile,
  Tweet,
  UsageSummary,
  WalletBalance,
  WatchlistAddItem,
  WatchlistEntry,
} from './types.js';
import { addAllToWatchlist, waitForBatch, waitForExport, type AddAllOptions, type AddAllResult, type WaitOptions } from './wait.js';

/** Which method of SdgClient calls each operation of the API (the compiler checks none is missing). */
export const operationMethods: Record<OperationId, Extract<keyof SdgClient, string>> = {
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

/**
 * A client of the gateway's API. Calls that charge credits are the GETs of social data and wallets
 * (userByUsername, tweet, community, userTweets, retweeters, walletBalance); every other is free.
 */
export class SdgClient extends ClientCore {
  // ---- account (free) ----

  /** The account's credit balance (free). */
  balance(o: CallOptions = {}): Promise<Result<Balance>> {
    return this.single(this.api.GET('/api/v1/credits/balance', { signal: o.signal, ...this.free }), o);
  }

  /** The calling account: its plan, rate limit and balance (free). */
  account(o: CallOptions = {}): Promise<Result<Account>> {
    return this.single(this.api.GET('/api/v1/account', { signal: o.signal, ...this.free }), o);
  }

  /** Calls and credits per endpoint per hour or day over [from, to), from the ledger (free). */
  usageSummary(q: QueryOptions<'getUsageSummary'>, o: CallOptions = {}): Promise<Result<UsageSummary>> {
    return this.single(this.api.GET('/api/v1/usage/summary', { params: { query: q }, signal: o.signal, ...this.free }), o);
  }

  /** The plans on offer (free). */
  plans(o: CallOptions = {}): Promise<Result<Plans>> {
    return this.single(this.api.GET('/api/v1/payments/plans', { signal: o.signal, ...this.free }), o);
  }

  /**
   * A new API key for the account. `data.key` is the secret, shown only here, and NULL when the
   * answer is a replay (`replayed: true`: the same Idempotency-Key, as when this call's own retry
   * follows an answer lost on the way): the key exists but nobody holds its secret, as the gateway
   * never keeps one. Then revoke it by `data.id` and create another. Narrow on `replayed` (or
   * `data.key === null`) before using the secret.
   */
  async createKey(body: Loose<BodyOf<'createApiKey'>> = {}, o: PostOptions = {}): Promise<CreatedKey> {
    const key = this.keyFor(o);
    return (await this.single(this.api.POST('/api/v1/api-keys', { body, signal: o.signal, headers: { 'idempotency-key': key } }), o, key)) as CreatedKey;
  }

  /** One page of the account's keys, newest first, never their secrets. */
  keysPage(q: PageQuery<'listApiKeys'> = {}, o: CallOptions = {}): Promise<Result<Page<ApiKey>>> {
    return this.page(this.api.GET('/api/v1/api-keys', { params: { query: q }, signal: o.signal, ...this.free }), o);
  }

  /** All the account's keys, revoked ones included. */
  keys(o: ListOptions<'listApiKeys'> = {}): Paginator<ApiKey> {
    const { query, iterate, call } = split(o);
    return new Paginator((cursor, atMost) => this.keysPage({ ...query, limit: pageLimit(query.limit, 100, atMost), cursor }, call), iterate);
  }

  /** Revokes a key; it stops working at once. */
  revokeKey(id: string, o: CallOptions = {}): Promise<Result<ApiKey>> {
    return this.single(this.api.DELETE('/api/v1/api-keys/{id}', { params: { path: { id } }, signal: o.signal, ...this.free }), o);
  }

  /** One page of the account's ledger, newest first. */
  usagePage(q: PageQuery<'listUsage'> = {}, o: CallOptions = {}): Promise<Result<Page<LedgerEntry>>> {
    return this.page(this.api.GET('/api/v1/usage', { params: { query: q }, signal: o.signal, ...this.free }), o);
  }

  /** The whole ledger, newest first. */
  usage(o: ListOptions<'listUsage'> = {}): Paginator<LedgerEntry> {
    const { query, iterate, call } = split(o);
    return new Paginator((cursor, atMost) => this.usagePage({ ...query, limit: pageLimit(query.limit, 20, atMost), cursor }, call), iterate);
  }

  // ---- social (charged: not sent again once the request may have reached the gateway) ----

  /** A profile by username. */
  userByUsername(username: string, o: CallOptions = {}): Promise<Result<SocialProfile>> {
    return this.single(this.api.GET('/social/v1/users/by/username/{username}', { params: { path: { username } }, signal: o.signal }), o);
  }

  /** A tweet by id. */
  tweet(id: string, o: CallOptions = {}): Promise<Result<Tweet>> {
    return this.single(this.api.GET('/social/v1/tweets/{id}', { params: { path: { id } }, signal: o.signal }), o);
  }

  /** A community by id. */
  community(id: string, o: CallOptions = {}): Promise<Result<Community>> {
    return this.single(this.api.GET('/social/v1/communities/{id}', { params: { path: { id } }, signal: o.signal }), o);
  }

  /** One page of a user's tweets, newest first; `startTime`, `endTime`, `sinceId`, `untilId` narrow it. */
  userTweetsPage(userId: string, q: PageQuery<'getUserTweets'> = {}, o: CallOptions = {}): Promise<Result<Page<Tweet>>> {
    return this.page(this.api.GET('/social/v1/users/{id}/tweets', { params: { path: { id: userId }, query: q }, signal: o.signal }), o);
  }

  /** A user's tweets to the end (pages of 100 unless `limit` says otherwise; each page is charged). */
  userTweets(userId: string, o: ListOptions<'getUserTweets'> = {}): Paginator<Tweet> {
    const { query, iterate, call } = split(o);
    return new Paginator((cursor, atMost) => this.userTweetsPage(userId, { ...query, limit: pageLimit(query.limit, 100, atMost), cursor }, call), iterate);
  }

  /** One page of a tweet's retweeters, most recent first. */
  retweetersPage(tweetId: string, q: PageQuery<'getRetweeters'> = {}, o: CallOptions = {}): Promise<Result<Page<SocialProfile>>> {
    return this.page(this.api.GET('/social/v1/tweets/{id}/retweeted_by', { params: { path: { id: tweetId }, query: q }, signal: o.signal }), o);
  }

  /** A tweet's retweeters to the end (pages of 100 unless `limit` says otherwise). */
  retweeters(tweetId: string, o: ListOptions<'getRetweeters'> = {}): Paginator<SocialProfile> {
    const { query, iterate, call } = split(o);
    return new Paginator((cursor, atMost) => this.retweetersPage(tweetId, { ...query, limit: pageLimit(query.limit, 100, atMost), cursor }, call), iterate);
  }

  // ---- bulk export: watchlist (free) ----

  /** Queues a batch adding up to 100 accounts (by socialUserId and/or username) to the watchlist. */
  addToWatchlist(items: WatchlistAddItem[], o: PostOptions = {}): Promise<Result<Batch>> {
    const key = this.keyFor(o);
    return this.single(this.api.POST('/social/v1/bulk-export/watchlist/batch', { body: { items }, signal: o.signal, headers: { 'idempotency-key': key } }), o, key);
  }

  /** Queues a batch removing up to 100 accounts (numeric ids) from the watchlist. */
  removeFromWatchlist(socialUserIds: string[], o: PostOptions = {}): Promise<Result<Batch>> {
    const key = this.keyFor(o);
    return this.single(this.api.POST('/social/v1/bulk-export/watchlist/batch-remove', { body: { socialUserIds }, signal: o.signal, headers: { 'idempotency-key': key } }), o, key);
  }

  /** A batch with an outcome per item. */
  batch(batchId: string, o: CallOptions = {}): Promise<Result<Batch>> {
    return this.single(this.api.GET('/social/v1/bulk-export/watchlist/batch/{batchId}', { params: { path: { batchId } }, signal: o.signal, ...this.free }), o);
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
    return this.page(this.api.GET('/social/v1/bulk-export/watchlist', { params: { query: q }, signal: o.signal, ...this.free }), o);
  }

  /** The whole watchlist. */
  watchlist(o: ListOptions<'listWatchlist'> = {}): Paginator<WatchlistEntry> {
    const { query, iterate, call } = split(o);
    return new Paginator((cursor, atMost) => this.watchlistPage({ ...query, limit: pageLimit(query.limit, 100, atMost), cursor }, call), iterate);
  }

  /** The crawl's current and last completed cycle and its schedule. */
  async crawlStatus(o: CallOptions = {}): Promise<Result<CrawlStatus>> {
    return this.single(this.api.GET('/social/v1/bulk-export/crawl-status', { signal: o.signal, ...this.free }), o);
  }

  // ---- bulk export: exports (free) ----

  /** Queues an export of the watched accounts' tweets created in [startDate, endDate) (at most 24 h). */
  generateExport(range: Loose<BodyOf<'generateExport'>>, o: PostOptions = {}): Promise<Result<ExportRecord>> {
    const key = this.keyFor(o);
    return this.single(this.api.POST('/social/v1/bulk-export/exports/generate', { body: range, signal: o.signal, headers: { 'idempotency-key': key } }), o, key);
  }

  /** One export in any status. */
  getExport(id: string, o: CallOptions = {}): Promise<Result<ExportRecord>> {
    return this.single(this.api.GET('/social/v1/bulk-export/exports/{id}', { params: { path: { id } }, signal: o.signal, ...this.free }), o);
  }

  /** The most recently completed export. */
  latestExport(o: CallOptions = {}): Promise<Result<ExportRecord>> {
    return this.single(this.api.GET('/social/v1/bulk-export/exports/latest', { signal: o.signal, ...this.free }), o);
  }

  /** One page of the account's exports, newest first. */
  exportsPage(q: PageQuery<'listExports'> = {}, o: CallOptions = {}): Promise<Result<Page<ExportRecord>>> {
    return this.page(this.api.GET('/social/v1/bulk-export/exports', { params: { query: q }, signal: o.signal, ...this.free }), o);
  }

  /** All the account's exports, newest first. */
  exports(o: ListOptions<'listExports'> = {}): Paginator<ExportRecord> {
    const { query, iterate, call } = split(o);
    return new Paginator((cursor, atMost) => this.exportsPage({ ...query, limit: pageLimit(query.limit, 100, atMost), cursor }, call), iterate);
  }

  /** A completed export's download link (needs no key; expires at `expiresAt`). */
  exportDownload(id: string, o: CallOptions = {}): Promise<Result<ExportDownload>> {
    return this.single(this.api.GET('/social/v1/bulk-export/exports/{id}/download', { params: { path: { id } }, signal: o.signal, ...this.free }), o);
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
  exportToFile(range: Loose<BodyOf<'generateExport'>>, path: string, o: ExportToFileOptions = {}): Promise<DownloadedExport> {
    return exportToFile(this, range, path, o);
  }

  // ---- echo (free) and wallet (charged) ----

  /** Says hello with the account's id: a cheap check of the key. */
  hello(o: CallOptions = {}): Promise<Result<Hello>> {
    return this.single(this.api.GET('/echo/v1/hello', { signal: o.signal, ...this.free }), o);
  }

  /** A wallet's native balance on a configured chain (charged). */
  walletBalance(address: string, q: QueryOptions<'getWalletBalance'> = {}, o: CallOptions = {}): Promise<Result<WalletBalance>> {
    return this.single(this.api.GET('/wallet/v1/balance/{address}', { params: { path: { address }, query: q }, signal: o.signal }), o);
  }
}
