// @social-data-gateway/sdk: a typed client of the Social Data Gateway API.
export { SdgClient, operationMethods, type SdgClientOptions, type CallOptions, type PostOptions, type PageQuery, type ListOptions, type QueryOptions, type Loose } from './client.js';
export * from './errors.js';
export { isApiError, apiErrorFrom, type ErrorOfCode, type DetailsOf, type DetailsByCode, type KeyLimitReachedDetails, type OpenJobsLimitDetails, type ExportExpiredDetails, type InvalidRequestDetails } from './error-codes.js';
export { Paginator, type IterateOptions } from './paginate.js';
export type { Result, ResponseMeta, Credits, RateLimit } from './result.js';
export { defaultRetry, retryDelayMs, type RetryOptions, type RetryEvent, type ResolvedRetry } from './retry-policy.js';
export type { WaitOptions, AddAllOptions, AddAllResult } from './wait.js';
export type { DownloadOptions, DownloadProgress, DownloadedExport, ExportToFileOptions } from './export-file.js';
export type * from './types.js';
export type { paths, operations, components } from './schema.js';
