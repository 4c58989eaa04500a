// The filters of a user's timeline (startTime, endTime, sinceId, untilId), with the meaning X API v2
// gives them: startTime inclusive, endTime exclusive, sinceId and untilId exclusive. Checked once,
// then handed to the data source, and written in one canonical form that binds cursors and the list
// cache to them (two spellings of the same instant are the same filter).
import { INSTANT_WORDS, parseIsoWithOffset, queryDateTime } from '../domain/dates.js';
import { AppError } from '../errors/app-error.js';

export interface TimelineFilters {
  /** Tweets created at or after this instant. */
  startTime?: Date;
  /** Tweets created before this instant. */
  endTime?: Date;
  /** Tweets with an id greater than this. */
  sinceId?: string;
  /** Tweets with an id less than this. */
  untilId?: string;
}

/** The filters as the caller wrote them (query-string text). */
export interface TimelineFilterText {
  startTime?: string | undefined;
  endTime?: string | undefined;
  sinceId?: string | undefined;
  untilId?: string | undefined;
}

const NUMERIC = /^[0-9]{1,19}$/;

function invalid(field: keyof TimelineFilterText, message: string): AppError {
  return new AppError('invalid_request', `${field} ${message}.`, { fields: [{ field: `querystring.${field}`, message }] });
}

function instant(text: string | undefined, field: 'startTime' | 'endTime'): Date | undefined {
  if (text === undefined) return undefined;
  const ms = parseIsoWithOffset(queryDateTime(text));
  if (ms === undefined) throw invalid(field, `must be ${INSTANT_WORDS}, e.g. 2025-01-31T00:00:00Z (a + in a query string is sent as %2B)`);
  return new Date(ms);
}

function id(text: string | undefined, field: 'sinceId' | 'untilId'): string | undefined {
  if (text === undefined) return undefined;
  if (!NUMERIC.test(text)) throw invalid(field, 'must be a numeric tweet id (1 to 19 digits)');
  return BigInt(text).toString(); // canonical: no leading zeros
}

/** Checks the caller's filters: 400 invalid_request naming the field when one is malformed or the range is empty. */
export function parseTimelineFilters(q: TimelineFilterText): TimelineFilters {
  const startTime = instant(q.startTime, 'startTime');
  const endTime = instant(q.endTime, 'endTime');
  const sinceId = id(q.sinceId, 'sinceId');
  const untilId = id(q.untilId, 'untilId');
  if (startTime && endTime && startTime.getTime() >= endTime.getTime()) throw invalid('endTime', 'must be after startTime');
  if (sinceId !== undefined && untilId !== undefined && BigInt(sinceId) >= BigInt(untilId)) throw invalid('untilId', 'must be greater than sinceId');
  return {
    ...(startTime ? { startTime } : {}),
    ...(endTime ? { endTime } : {}),
    ...(sinceId !== undefined ? { sinceId } : {}),
    ...(untilId !== undefined ? { untilId } : {}),
  };
}

export function hasFilters(f: TimelineFilters): boolean {
  return f.startTime !== undefined || f.endTime !== undefined || f.sinceId !== undefined || f.untilId !== undefined;
}

/** The filters as canonical text (UTC instants to the millisecond, ids without leading zeros). */
export function filterText(f: TimelineFilters): TimelineFilterText {
  return {
    ...(f.startTime ? { startTime: f.startTime.toISOString() } : {}),
    ...(f.endTime ? { endTime: f.endTime.toISOString() } : {}),
    ...(f.sinceId !== undefined ? { sinceId: f.sinceId } : {}),
    ...(f.untilId !== undefined ? { untilId: f.untilId } : {}),
  };
}

/** One string per distinct set of filters ('' for none), in a fixed order. */
export function filterKey(f: TimelineFilters): string {
  const t = filterText(f);
  return hasFilters(f) ? `s=${t.startTime ?? ''}|e=${t.endTime ?? ''}|si=${t.sinceId ?? ''}|ui=${t.untilId ?? ''}` : '';
}
