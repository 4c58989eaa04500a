// The window of a usage summary (from, to, granularity), checked once, and the bucket labels written
// in the caller's own offset: asked from 2026-11-20T00:00:00+05:30, the days start at midnight +05:30.
import { INSTANT_WORDS, parseIsoWithOffset, queryDateTime } from '../domain/dates.js';
import { AppError } from '../errors/app-error.js';
import type { UsageWindow } from './usage-summary.js';

export type Granularity = 'hour' | 'day';

const HOUR_MS = 3_600_000;
export const BUCKET_MS: Readonly<Record<Granularity, number>> = { hour: HOUR_MS, day: 24 * HOUR_MS };
/** The longest window per granularity: 31 days of hours (744 buckets), 366 days of days. */
export const MAX_SPAN_MS: Readonly<Record<Granularity, number>> = { hour: 31 * 24 * HOUR_MS, day: 366 * 24 * HOUR_MS };

/** 10000-01-01T00:00: the first instant a four-digit year cannot write. */
const LAST_WRITABLE_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1;

export interface ParsedWindow extends UsageWindow {
  granularity: Granularity;
  /** Minutes east of UTC of `from` as written (0 for Z): every label is written in this offset. */
  offsetMinutes: number;
  buckets: number;
}

function invalid(field: string, message: string): AppError {
  return new AppError('invalid_request', `${field} ${message}.`, { fields: [{ field: `querystring.${field}`, message }] });
}

function offsetOf(text: string): number {
  const m = /([+-])(\d{2}):(\d{2})$/.exec(text);
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
}

export function parseUsageWindow(q: { from: string; to: string; granularity?: Granularity | undefined }): ParsedWindow {
  const granularity = q.granularity ?? 'day';
  const example = 'e.g. 2026-11-20T00:00:00+01:00 (a + in a query string is sent as %2B)';
  const from = queryDateTime(q.from);
  const fromMs = parseIsoWithOffset(from);
  if (fromMs === undefined) throw invalid('from', `must be ${INSTANT_WORDS}, ${example}`);
  const toMs = parseIsoWithOffset(queryDateTime(q.to));
  if (toMs === undefined) throw invalid('to', `must be ${INSTANT_WORDS}, ${example}`);
  if (fromMs >= toMs) throw invalid('to', 'must be after from');
  const max = MAX_SPAN_MS[granularity];
  if (toMs - fromMs > max) throw invalid('to', `must be at most ${max / (24 * HOUR_MS)} days after from with granularity=${granularity}`);
  const bucketMs = BUCKET_MS[granularity];
  const offsetMinutes = offsetOf(from);
  const buckets = Math.ceil((toMs - fromMs) / bucketMs);
  // Every label is written in from's offset: a window ending late on 9999-12-31 in UTC could end
  // in the year 10000 there, which RFC 3339 (the answer's date-time) cannot write.
  if (fromMs + buckets * bucketMs + offsetMinutes * 60_000 >= LAST_WRITABLE_MS) throw invalid('to', "must leave the window's last bucket, in from's offset, within the year 9999");
  return { fromMs, toMs, bucketMs, granularity, offsetMinutes, buckets };
}

/** The instant `ms` written as ISO 8601 in the given offset, e.g. 2026-11-20T00:00:00.000+05:30. */
export function isoAtOffset(ms: number, offsetMinutes: number): string {
  if (offsetMinutes === 0) return new Date(ms).toISOString();
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, -1);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
