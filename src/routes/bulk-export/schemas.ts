// Records of the bulk-export group (docs/spec/contract.md, section 8; docs/spec/connector-spec.md, 2.4) as TypeBox schemas, and
// the mapping from store rows to them.
import { Type, type Static } from '@sinclair/typebox';
import type { BatchRow, ItemRow } from '../../watchlist/batch-repo.js';
import type { ExportRow } from '../../exports/export-repo.js';
import type { WatchlistEntriesTable } from '../../db/schema.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const DateTime = Type.String({ format: 'date-time' });
const Count = Type.Integer({ minimum: 0 });

export const ExportRecord = Type.Object(
  {
    id: Type.String({ description: 'numeric export id' }),
    status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]),
    startDate: DateTime,
    endDate: DateTime,
    format: Type.Literal('jsonl.gz'),
    tweetCount: Nullable(Count),
    sizeBytes: Nullable(Count),
    sha256: Nullable(Type.String({ pattern: '^[0-9a-f]{64}$' })),
    createdAt: DateTime,
    startedAt: Nullable(DateTime),
    completedAt: Nullable(DateTime),
    error: Nullable(Type.String({ description: 'why the export failed (status failed)' })),
    expiredAt: Nullable({ ...DateTime, description: 'when the file was removed under EXPORT_RETENTION_DAYS; the record stays, the download answers 404 export_expired' }),
  },
  { additionalProperties: false, title: 'Export' },
);
export type ExportRecord = Static<typeof ExportRecord>;

export function exportRecord(r: ExportRow): ExportRecord {
  const n = (v: number | null) => (v === null ? null : Number(v));
  return {
    id: r.id,
    status: r.status,
    startDate: r.start_date,
    endDate: r.end_date,
    format: 'jsonl.gz',
    tweetCount: n(r.tweet_count),
    sizeBytes: n(r.size_bytes),
    sha256: r.sha256,
    createdAt: r.created_at,
    startedAt: r.started_at,
    completedAt: r.completed_at,
    error: r.error,
    expiredAt: r.expired_at,
  };
}

export const DownloadLink = Type.Object(
  {
    id: Type.String(),
    url: Type.String({ description: 'works without an API key until expiresAt' }),
    expiresAt: DateTime,
    sizeBytes: Count,
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'of the gzip file: check the download against it' }),
  },
  { additionalProperties: false, title: 'DownloadLink' },
);

export const ItemStatus = Type.Union(
  ['pending', 'added', 'already_present', 'removed', 'not_present', 'not_found', 'limit_exceeded', 'failed'].map((s) => Type.Literal(s)),
  { title: 'BatchItemStatus' },
);

export const BatchItem = Type.Object(
  {
    socialUserId: Nullable(Type.String()),
    username: Nullable(Type.String()),
    status: ItemStatus,
    error: Nullable(Type.String()),
  },
  { additionalProperties: false, title: 'BatchItem' },
);

export const BatchRecord = Type.Object(
  {
    batchId: Type.String(),
    operation: Type.Union([Type.Literal('add'), Type.Literal('remove')]),
    status: Type.Union([Type.Literal('queued'), Type.Literal('processing'), Type.Literal('completed'), Type.Literal('failed')]),
    total: Count,
    processed: Count,
    succeeded: Count,
    failed: Count,
    createdAt: DateTime,
    completedAt: Nullable(DateTime),
    items: Type.Array(BatchItem),
  },
  { additionalProperties: false, title: 'Batch' },
);
export type BatchRecord = Static<typeof BatchRecord>;

export function batchRecord(b: BatchRow, items: ItemRow[]): BatchRecord {
  return {
    batchId: b.id,
    operation: b.operation,
    status: b.status,
    total: b.total,
    processed: b.processed,
    succeeded: b.succeeded,
    failed: b.failed,
    createdAt: b.created_at,
    completedAt: b.completed_at,
    items: items.map((i) => ({ socialUserId: i.social_user_id, username: i.username, status: i.status, error: i.error })),
  };
}

export const WatchlistEntry = Type.Object(
  {
    socialUserId: Type.String(),
    username: Type.String(),
    addedAt: DateTime,
  },
  { additionalProperties: false, title: 'WatchlistEntry' },
);

export function watchlistEntry(r: WatchlistEntriesTable): Static<typeof WatchlistEntry> {
  return { socialUserId: r.social_user_id, username: r.username, addedAt: r.added_at };
}

const Progress = {
  id: Type.String(),
  startedAt: DateTime,
  accountsTargeted: Count,
  accountsCompleted: Count,
  accountsFailed: Count,
  tweetsIngested: Count,
};

export const CrawlStatusEnvelope = Type.Object({
  success: Type.Literal(true),
  data: Type.Object(
    {
      currentCycle: Type.Union([
        Type.Object(
          { ...Progress, status: Type.Literal('running'), percentComplete: Type.Number({ minimum: 0, maximum: 100 }) },
          { additionalProperties: false },
        ),
        Type.Null(),
      ]),
      lastCompletedCycle: Type.Union([
        Type.Object(
          { ...Progress, completedAt: DateTime, durationMinutes: Count, tweetsUpdated: Count },
          { additionalProperties: false },
        ),
        Type.Null(),
      ]),
      schedule: Type.Object({ intervalHours: Type.Number({ exclusiveMinimum: 0 }), nextExpectedAt: DateTime }, { additionalProperties: false }),
    },
    { additionalProperties: false, title: 'CrawlStatus' },
  ),
}, { 'x-response-description': 'The crawl’s progress and schedule.' });

/** The single envelope's meta for answers computed now. */
export const meta = (requestId: string) => ({ requestId, cached: false });
