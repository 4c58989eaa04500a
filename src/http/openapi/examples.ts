// Examples for the OpenAPI document: one per named schema (written here, checked against its schema
// by test/openapi), and answers built from them: an envelope's example is made of its parts'.
import { defaultPlans } from '../../config/plans.js';
import type { ErrorCode } from '../../errors/app-error.js';

type Json = Record<string, unknown>;

const userId = '1402937461029384756';
const tweetId = '1885331920045127808';
const requestId = 'req_Xk2f9Qa81LmZ3';
const sha256 = '9f2b5c0e4d1a7b3c8e6f0a2d4c6b8e0f1a3c5e7b9d1f3a5c7e9b1d3f5a7c9e1b';

const tweetText = 'Shipping the new export format today. #release https://t.co/x7Qa2';
const at = (s: string) => tweetText.indexOf(s);

const hello = { message: 'hello', accountId: 'acc_9fQ2kLm4Xa7PzR1c', timestamp: '2025-01-31T12:00:00.000Z' };

const examples: Record<string, unknown> = {
  Meta: { requestId, cached: false },
  Tweet: {
    id: tweetId,
    text: tweetText,
    authorId: userId,
    createdAt: '2025-01-31T14:03:27.000Z',
    url: `https://x.com/ada_builds/status/${tweetId}`,
    language: 'en',
    conversationId: tweetId,
    inReplyTo: null,
    metrics: { retweets: 12, replies: 4, likes: 180, quotes: 2, views: 5400, bookmarks: 9 },
    entities: {
      hashtags: [{ tag: 'release', start: at('#release'), end: at('#release') + 8 }],
      urls: [{ url: 'https://t.co/x7Qa2', expandedUrl: 'https://example.com/changelog', displayUrl: 'example.com/changelog', start: at('https://t.co'), end: tweetText.length }],
      mentions: [],
    },
    media: [],
    quotedTweetId: null,
    retweetedTweetId: null,
  },
  SocialProfile: {
    id: userId,
    username: 'ada_builds',
    displayUsername: 'ada_builds',
    name: 'Ada Builds',
    description: 'Building data tools in the open.',
    location: 'Lisbon',
    url: 'https://example.com',
    profileImageUrl: 'https://images.example.com/ada_builds/profile.jpg',
    bannerUrl: null,
    createdAt: '2019-06-02T09:15:00.000Z',
    verified: false,
    verifiedType: 'none',
    protected: false,
    metrics: { followers: 1520, following: 310, tweets: 4821, listed: 12, likes: 9102, media: 230 },
    pinnedTweetIds: [tweetId],
  },
  Community: {
    id: '1493446837214187523',
    name: 'Open Data',
    description: 'People who publish and use open data sets.',
    memberCount: 15400,
    moderatorCount: 6,
    createdAt: '2022-02-15T10:00:00.000Z',
    access: 'public',
    joinPolicy: 'open',
    rules: [{ id: '1', name: 'Stay on topic', description: 'Posts are about open data.' }],
    bannerUrl: null,
    creatorId: userId,
  },
  Export: {
    id: '5764607523034234881',
    status: 'completed',
    startDate: '2025-01-31T00:00:00.000Z',
    endDate: '2025-02-01T00:00:00.000Z',
    format: 'jsonl.gz',
    tweetCount: 1843,
    sizeBytes: 402113,
    sha256,
    createdAt: '2025-02-01T00:05:00.000Z',
    startedAt: '2025-02-01T00:05:01.000Z',
    completedAt: '2025-02-01T00:05:09.000Z',
    error: null,
    expiredAt: null,
  },
  DownloadLink: {
    id: '5764607523034234881',
    url: 'http://localhost:8080/downloads/exports/5764607523034234881?expires=1738369800&sig=Jw3kQ9xR2mZ8aT1bC4dE6fG0hH5iL7nP',
    expiresAt: '2025-02-01T00:30:00.000Z',
    sizeBytes: 402113,
    sha256,
  },
  BatchItem: { socialUserId: userId, username: 'ada_builds', status: 'added', error: null },
  Batch: {
    batchId: 'wlb_Qm2x8Ka0Lp3ZtR7c',
    operation: 'add',
    status: 'completed',
    total: 2,
    processed: 2,
    succeeded: 1,
    failed: 1,
    createdAt: '2025-01-31T12:00:00.000Z',
    completedAt: '2025-01-31T12:00:02.000Z',
    items: [
      { socialUserId: userId, username: 'ada_builds', status: 'added', error: null },
      { socialUserId: null, username: 'no_such_user', status: 'not_found', error: 'No user @no_such_user.' },
    ],
  },
  WatchlistEntry: { socialUserId: userId, username: 'ada_builds', addedAt: '2025-01-31T12:00:02.000Z' },
  CrawlStatus: {
    currentCycle: {
      id: 'cyc_a8Kq2ZmX0',
      startedAt: '2025-01-31T12:00:00.000Z',
      accountsTargeted: 250,
      accountsCompleted: 98,
      accountsFailed: 2,
      tweetsIngested: 4120,
      status: 'running',
      percentComplete: 40,
    },
    lastCompletedCycle: {
      id: 'cyc_P1x9LmQ4z',
      startedAt: '2025-01-31T06:00:00.000Z',
      accountsTargeted: 250,
      accountsCompleted: 249,
      accountsFailed: 1,
      tweetsIngested: 10822,
      completedAt: '2025-01-31T06:14:00.000Z',
      durationMinutes: 14,
      tweetsUpdated: 3310,
    },
    schedule: { intervalHours: 6, nextExpectedAt: '2025-01-31T18:00:00.000Z' },
  },
  ApiKey: { id: 'key_Z3kPq8Lm2XaR', name: 'ci', prefix: 'sdg_live_Ab3dE9', createdAt: '2025-01-31T12:00:00.000Z', revokedAt: null },
  NewApiKey: {
    id: 'key_Z3kPq8Lm2XaR',
    name: 'ci',
    key: 'sdg_live_Ab3dE9xQ2mZ8aT1bC4dE6fG0hH5iL7nPqRsTuVwXyZ0',
    prefix: 'sdg_live_Ab3dE9',
    createdAt: '2025-01-31T12:00:00.000Z',
  },
  Plan: defaultPlans[1],
  UsageRecord: {
    id: 'led_s2Tl_vu_qSlF92H52ml0aw',
    kind: 'charge',
    amount: -100,
    balanceAfter: 9900,
    requestId,
    keyId: 'key_Z3kPq8Lm2XaR',
    endpoint: 'getTweet',
    note: null,
    createdAt: '2025-01-31T12:00:00.000Z',
  },
  Balance: { accountId: hello.accountId, balance: 9900, updatedAt: '2025-01-31T12:00:00.000Z' },
  TweetMetrics: { retweets: 12, replies: 4, likes: 180, quotes: 2, views: 5400, bookmarks: 9 },
  ProfileMetrics: { followers: 1520, following: 310, tweets: 4821, listed: 12, likes: 9102, media: 230 },
  Media: {
    id: '3_1885331919000000000',
    type: 'photo',
    url: 'https://images.example.com/media/1885331919.jpg',
    previewImageUrl: null,
    width: 1200,
    height: 800,
    altText: 'A chart of exports per day',
  },
  CommunityRule: { id: '1', name: 'Stay on topic', description: 'Posts are about open data.' },
  WalletBalance: {
    address: '0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1',
    chain: 'ethereum',
    chainId: 1,
    balance: '1000000000000000000000',
    decimals: 18,
    symbol: 'ETH',
    formatted: '1000',
    blockNumber: 19000000,
  },
  InsufficientCreditsDetails: { required: 100, balance: 40, available: 40 },
  RateLimitedDetails: { scope: 'key', retryAfterSeconds: 12 },
  ExportNotReadyDetails: { status: 'running' },
  KeyLimitReachedDetails: { limit: 5, active: 5 },
  UsageSummary: {
    from: '2025-01-31T00:00:00Z',
    to: '2025-02-01T00:00:00Z',
    granularity: 'day',
    calls: 3,
    credits: 300,
    endpoints: [
      { endpoint: 'getUserTweets', calls: 2, credits: 200 },
      { endpoint: 'getTweet', calls: 1, credits: 100 },
    ],
    buckets: [
      {
        start: '2025-01-31T00:00:00Z',
        end: '2025-02-01T00:00:00Z',
        calls: 3,
        credits: 300,
        endpoints: [
          { endpoint: 'getUserTweets', calls: 2, credits: 200 },
          { endpoint: 'getTweet', calls: 1, credits: 100 },
        ],
      },
    ],
  },
  Account: {
    id: hello.accountId,
    name: 'Ada Builds',
    planId: 'starter',
    planName: 'Starter',
    rateLimitPerMinute: 1200,
    balance: 9900,
    createdAt: '2025-01-02T09:00:00.000Z',
  },
  Hello: hello,
};

/**
 * An answer's `data` where it is not its schema's example: a POST that queues a job answers it queued,
 * and a revoke answers the key revoked.
 */
const answerData: Record<string, (schemaExample: Record<string, unknown>) => unknown> = {
  generateExport: (e) => ({ ...e, status: 'queued', tweetCount: null, sizeBytes: null, sha256: null, startedAt: null, completedAt: null }),
  addWatchlistBatch: (e) => queuedBatch(e, 'add', [{ socialUserId: null, username: 'ada_builds' }, { socialUserId: null, username: 'no_such_user' }]),
  removeWatchlistBatch: (e) => queuedBatch(e, 'remove', [{ socialUserId: userId, username: null }]),
  revokeApiKey: (e) => ({ ...e, revokedAt: '2025-01-31T12:30:00.000Z' }),
};

function queuedBatch(e: Record<string, unknown>, operation: string, items: Array<Record<string, unknown>>): unknown {
  const pending = items.map((i) => ({ ...i, status: 'pending', error: null }));
  return { ...e, operation, status: 'queued', total: pending.length, processed: 0, succeeded: 0, failed: 0, completedAt: null, items: pending };
}

/** The example of an operation's 2xx answer: its schema's, with `data` as answerData says. */
export function answerExample(operationId: unknown, schemaExample: unknown): unknown {
  const make = typeof operationId === 'string' ? answerData[operationId] : undefined;
  const answer = schemaExample as { data?: Record<string, unknown> } | null;
  if (!make || !answer?.data) return schemaExample;
  return { ...answer, data: make(answer.data) };
}

const errorMessages: Record<ErrorCode, [message: string, details?: Json]> = {
  invalid_request: ['query.limit must be <= 100.', { fields: [{ field: 'query.limit', message: 'must be <= 100' }] }],
  invalid_cursor: ['The cursor was not issued by this service for this list; start again without a cursor.', { field: 'cursor', fields: [{ field: 'querystring.cursor', message: 'was not issued by this service for this list' }] }],
  invalid_date_range: ['endDate must be after startDate, at most 24 hours later.'],
  missing_api_key: ['Send your API key in the X-API-Key header.'],
  invalid_api_key: ['The API key is not valid: it is unknown, malformed or revoked.'],
  insufficient_credits: ['This call costs 100 credits and your balance is 40.', { required: 100, balance: 40, available: 40 }],
  protected_account: ['This account is protected: its tweets are not visible.'],
  not_found: ['No tweet found.'],
  export_not_ready: ['Export 5764607523034234881 is running, not completed; a link is available once it completes.', { status: 'running' }],
  idempotency_conflict: ['This Idempotency-Key was used for another request.'],
  key_limit_reached: ['This account holds 5 active API keys, its plan’s limit of 5; revoke one to create another.', { active: 5, limit: 5 }],
  open_jobs_limit_reached: ['This account already has 5 unfinished exports, its limit of 5; wait for one to complete.', { limit: 5, open: 5 }],
  export_expired: ['Export 5764607523034234881 has expired: its file was removed under the retention policy, and only its record is kept. Generate the export again.', { expiredAt: '2025-02-08T00:00:00.000Z' }],
  payload_too_large: ['The body is larger than 1 MiB.'],
  unsupported_media_type: ['Send the body as JSON with Content-Type: application/json.'],
  range_not_satisfiable: ['The file has 48213 bytes; the range asked for lies outside it.', { sizeBytes: 48213 }],
  rate_limited: ['Rate limit of 600 requests a minute reached; retry in 12 s.', { scope: 'key', retryAfterSeconds: 12 }],
  internal_error: ['Something went wrong on our side; the call was not charged. Please retry.'],
  service_unavailable: ['The gateway cannot use its storage right now; the call was not charged. Retry in a few seconds.'],
  upstream_error: ['The data source sent an answer we could not read; retry later.'],
  upstream_unavailable: ['The data source is unavailable; retry later.'],
  upstream_timeout: ['The data source did not answer in time; retry later.'],
};

/** An OpenAPI Example object of an error answer with this code. */
export function errorExample(code: ErrorCode): { summary: string; value: Json } {
  const [message, details] = errorMessages[code];
  return { summary: code, value: { error: { code, message, ...(details ? { details } : {}) }, meta: { requestId } } };
}

/** Sets each named schema's `examples` from the table above. */
export function componentExamples(schemas: Record<string, Json>): void {
  for (const [name, schema] of Object.entries(schemas)) {
    if (examples[name] !== undefined) schema.examples = [examples[name]];
  }
}

/** An example of a value of this schema: its own example, else one made from its parts. */
export function exampleOf(schema: Json, schemas: Record<string, Json>, depth = 0): unknown {
  if (depth > 20) return null;
  const next = (s: unknown) => exampleOf(s as Json, schemas, depth + 1);
  if (typeof schema.$ref === 'string') return next(schemas[schema.$ref.replace('#/components/schemas/', '')] ?? {});
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map(next));
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches) return next(branches.find((b) => b.type !== 'null') ?? branches[0]);
  if (schema.type === 'object' || schema.properties) {
    return Object.fromEntries(Object.entries((schema.properties as Record<string, Json> | undefined) ?? {}).map(([k, v]) => [k, next(v)]));
  }
  if (schema.type === 'array') return schema.items ? [next(schema.items)] : [];
  if (schema.type === 'string') return schema.format === 'date-time' ? '2025-01-31T12:00:00.000Z' : 'text';
  if (schema.type === 'integer' || schema.type === 'number') return (schema.minimum as number | undefined) ?? 1;
  if (schema.type === 'boolean') return true;
  return null;
}
