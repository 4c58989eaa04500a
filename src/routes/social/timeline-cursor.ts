// A timeline's cursor holds the source position and the filters its list was read with, signed
// together: a page can be continued with the filters repeated or left out, never with other ones.
import { AppError } from '../../errors/app-error.js';
import type { CursorCodec } from '../../pagination/cursor.js';
import { filterKey, filterText, hasFilters, parseTimelineFilters, type TimelineFilters, type TimelineFilterText } from '../../social/timeline-filters.js';

interface TimelinePosition {
  p: string;
  /** The filters, when the list has any. */
  f?: TimelineFilterText;
}

/** What a timeline cursor carries besides the position: the filters, when there are any. */
export function carriedFilters(filters: TimelineFilters): { f?: TimelineFilterText } {
  return hasFilters(filters) ? { f: filterText(filters) } : {};
}

/**
 * The position and filters to read with: the request's filters without a cursor; the cursor's with
 * one, which the request may repeat or leave out. Other filters than the cursor's are invalid_cursor.
 */
export function timelineRead(cursors: CursorCodec, list: string, cursor: string | undefined, asked: TimelineFilters): { after?: string; filters: TimelineFilters } {
  if (cursor === undefined) return { filters: asked };
  const pos = cursors.decode<TimelinePosition>(list, cursor);
  const carried = pos.f ? parseTimelineFilters(pos.f) : {};
  if (hasFilters(asked) && filterKey(asked) !== filterKey(carried)) {
    throw new AppError(
      'invalid_cursor',
      'The cursor belongs to a list read with other filters (startTime, endTime, sinceId, untilId); send the filters it was issued with, or none, or start again without a cursor.',
      { field: 'cursor', fields: [{ field: 'querystring.cursor', message: 'belongs to a list read with other filters' }], cursorFilters: filterText(carried) },
    );
  }
  return { after: pos.p, filters: carried };
}
