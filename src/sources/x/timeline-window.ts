// The bounds of a timeline query (startTime, endTime, sinceId, untilId) on the X side. X applies them
// itself (start_time, end_time, since_id, until_id); they are also checked on what X answers, so that
// a tweet outside them never reaches a caller, and so that a bound X cannot take is still honoured.
import type { Tweet } from '../../domain/models.js';
import type { TimelineQuery } from '../types.js';
import { xTime } from './fields.js';
import { compareIds } from './map.js';

/** X's time parameters must be on or after this day (its OpenAPI document). */
export const X_EARLIEST_TIME_MS = Date.parse('2010-11-06T00:00:00Z');

/** The value of start_time / end_time, left out when X would refuse it (the bound is then applied here). */
export function timeParam(d: Date | undefined): string | undefined {
  return d && d.getTime() >= X_EARLIEST_TIME_MS ? xTime(d) : undefined;
}

/** The lower of two optional exclusive upper id bounds. */
export function lowerId(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return compareIds(a, b) <= 0 ? a : b;
}

/** Older than the query's lower bounds: in a newest-first list, nothing after it can qualify. */
export function belowWindow(t: Tweet, q: TimelineQuery): boolean {
  return (q.startTime !== undefined && Date.parse(t.createdAt) < q.startTime.getTime()) || (q.sinceId !== undefined && compareIds(t.id, q.sinceId) <= 0);
}

/** Newer than the query's upper bounds. */
export function aboveWindow(t: Tweet, q: TimelineQuery): boolean {
  return (q.endTime !== undefined && Date.parse(t.createdAt) >= q.endTime.getTime()) || (q.untilId !== undefined && compareIds(t.id, q.untilId) >= 0);
}
