// Named types of the API's records, taken from the generated schema by operation, so they follow
// the document whether or not it names its component schemas.
import type { Result } from './result.js';
import type { operations } from './schema.js';

export type OperationId = keyof operations;

type Responses<O extends OperationId> = operations[O]['responses'];
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON body of an operation's success answer. */
export type SuccessBody<O extends OperationId> = JsonOf<Responses<O>[Extract<keyof Responses<O>, 200 | 201 | 202>]>;
/** The `data` of a single-record answer. */
export type DataOf<O extends OperationId> = SuccessBody<O> extends { data: infer D } ? D : never;
/** The item of a paginated answer. */
export type ItemOf<O extends OperationId> = SuccessBody<O> extends { items: Array<infer I> } ? I : never;
/** An operation's query parameters. */
export type QueryOf<O extends OperationId> = operations[O]['parameters'] extends { query?: infer Q } ? NonNullable<Q> : never;
/** An operation's JSON body. */
export type BodyOf<O extends OperationId> = operations[O] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

export type Tweet = ItemOf<'getUserTweets'>;
export type SocialProfile = DataOf<'getUserByUsername'>;
export type Community = DataOf<'getCommunity'>;
export type Balance = DataOf<'getCreditsBalance'>;
export type Account = DataOf<'getAccount'>;
export type UsageSummary = DataOf<'getUsageSummary'>;
export type NewApiKey = DataOf<'createApiKey'>;
export type ApiKey = DataOf<'revokeApiKey'>;
export type Plans = DataOf<'listPlans'>;
export type Plan = Plans extends { plans: Array<infer P> } ? P : never;
export type LedgerEntry = ItemOf<'listUsage'>;
export type ExportRecord = DataOf<'getExport'>;
export type ExportDownload = DataOf<'getExportDownload'>;
export type Batch = DataOf<'getWatchlistBatch'>;
export type BatchItem = Batch extends { items: Array<infer I> } ? I : never;
export type WatchlistEntry = ItemOf<'listWatchlist'>;
export type CrawlStatus = SuccessBody<'getCrawlStatus'> extends { data: infer D } ? D : never;
export type WalletBalance = DataOf<'getWalletBalance'>;
export type Hello = DataOf<'echoHello'>;
export type WatchlistAddItem = BodyOf<'addWatchlistBatch'> extends { items: Array<infer I> } ? I : never;

/** One page of a paginated list. */
export interface Page<T> {
  items: T[];
  hasNextPage: boolean;
  nextCursor: string | null;
  cached: boolean;
}

/**
 * createKey's answer. Its secret is `data.key`, given once; a replay of the same Idempotency-Key
 * (`replayed: true`, as when the SDK's retry follows an answer lost on the way) answers `key: null`,
 * as the gateway never keeps a secret: that key exists but nobody holds it, so revoke it by `data.id`.
 */
export type CreatedKey = (Result<NewApiKey & { key: string }> & { replayed: false }) | (Result<NewApiKey & { key: null }> & { replayed: true });
