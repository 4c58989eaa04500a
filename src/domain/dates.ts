// The export range (docs/spec/contract.md, section 8): ISO 8601 with an offset or Z, start before end, at most 24 h.
import { AppError } from '../errors/app-error.js';

export const MAX_RANGE_MS = 24 * 3_600_000;

const ISO_WITH_OFFSET = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/i;

/** What parseIsoWithOffset takes, in words for a 400's message. */
export const INSTANT_WORDS = 'an ISO 8601 date-time with an offset or Z, in the years 0000 to 9999 once in UTC';

// The instants a four-digit year can write in UTC: one an offset pushes outside (0000-01-01T00:00+01:00)
// would be written back as -000001-12-31T23:00:00.000Z, which no date-time field may hold.
const FIRST_MS = Date.parse('0000-01-01T00:00:00.000Z');
const LAST_MS = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * Milliseconds since the Unix epoch, or undefined when the text is not ISO 8601 with an offset or Z,
 * or names an instant outside the years 0000 to 9999 in UTC. A time finer than a millisecond is
 * rounded up to the next one: every bound it sets is of a half-open range ([start, end)) over
 * instants stored to the millisecond, which the rounded bound selects exactly (cut instead,
 * …00.0001Z to …00.0009Z was refused as empty and an end 0.4 µs past 24 h taken as 24 h).
 */
export function parseIsoWithOffset(text: string): number | undefined {
  const m = ISO_WITH_OFFSET.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s] = m;
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1) return undefined;
  const daysInMonth = new Date(Date.UTC(Number(y), month, 0)).getUTCDate();
  if (day > daysInMonth || Number(h) > 23 || Number(mi) > 59 || Number(s ?? 0) > 59) return undefined;
  const offset = m[8]!;
  if (offset.toUpperCase() !== 'Z' && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4, 6)) > 59)) return undefined;
  const cut = Date.parse(text.toUpperCase().replace(/(\.\d{3})\d+/, '$1'));
  const ms = /[1-9]/.test(m[7]?.slice(3) ?? '') ? cut + 1 : cut;
  return Number.isNaN(ms) || ms < FIRST_MS || ms > LAST_MS ? undefined : ms;
}

/**
 * A date-time from a query string, where an offset's '+' sent unencoded arrives as a space (the
 * form encoding query strings are decoded with): `…T00:00:00 01:00` is read as `…T00:00:00+01:00`,
 * since a space is never valid there. Send `%2B` to be exact; this spares the caller who did not.
 */
export function queryDateTime(text: string): string {
  return text.replace(/(T[\d:.]+) (\d{2}:\d{2})$/i, '$1+$2');
}

export interface DateRange {
  /** Normalized to UTC, millisecond precision (the form stored tweets' createdAt take). */
  start: string;
  end: string;
}

export function parseExportRange(startDate: string, endDate: string): DateRange {
  const bad = (field: string, message: string) =>
    new AppError('invalid_date_range', `${field} ${message}.`, { fields: [{ field: `body.${field}`, message }] });
  const start = parseIsoWithOffset(startDate);
  if (start === undefined) throw bad('startDate', `must be ${INSTANT_WORDS}, e.g. 2025-01-31T00:00:00Z`);
  const end = parseIsoWithOffset(endDate);
  if (end === undefined) throw bad('endDate', `must be ${INSTANT_WORDS}, e.g. 2025-02-01T00:00:00Z`);
  if (start >= end) throw bad('endDate', 'must be after startDate');
  if (end - start > MAX_RANGE_MS) throw bad('endDate', 'must be at most 24 hours after startDate');
  return { start: new Date(start).toISOString(), end: new Date(end).toISOString() };
}
