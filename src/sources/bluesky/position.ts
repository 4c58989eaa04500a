// The timeline's position (`after`/`next`): where in the AppView's author feed the next page starts.
//
// The AppView pages by its own cursor; the gateway keeps only some of a page's items (the author's
// own posts within the query's bounds), so a page of `limit` tweets can end in the middle of an
// AppView page. The position then names that AppView page (its cursor, none for the first page, and
// the page size) and the last tweet returned, by the AppView's own sort key (sort time, CID): on
// resuming, the page is read again and everything up to that key is passed over. New posts at the
// top of the feed, or deleted ones, cannot make a walk repeat or skip a post.
import { SourceError } from '../types.js';

export interface FeedPosition {
  /** The AppView cursor of the page; undefined for the first page. */
  cursor: string | undefined;
  /** The page size to fetch with, 1..100. */
  size: number;
  /** The sort key of the last tweet returned, when the page was left in the middle. */
  last?: { ms: number; cid: string } | undefined;
}

const FORMAT = /^f2\|([0-9]{1,3})\|([0-9]{0,16})\|([a-z2-7]{0,200})\|(.*)$/s;

export function encodePosition(p: FeedPosition): string {
  return `f2|${p.size}|${p.last ? p.last.ms : ''}|${p.last ? p.last.cid : ''}|${p.cursor ?? ''}`;
}

export function decodePosition(text: string): FeedPosition {
  const m = FORMAT.exec(text);
  const size = Number(m?.[1]);
  if (!m || size < 1 || size > 100 || (m[2] === '') !== (m[3] === '')) throw new SourceError('bad_response', 'a Bluesky timeline position is malformed');
  return { cursor: m[4] === '' ? undefined : m[4], size, ...(m[2] ? { last: { ms: Number(m[2]), cid: m[3]! } } : {}) };
}

/** Whether the item with key (ms, cid) comes after `last` in the AppView's order: (sort time, CID) descending. */
export function isAfter(ms: number, cid: string, last: FeedPosition['last']): boolean {
  if (!last) return true;
  return ms < last.ms || (ms === last.ms && cid < last.cid);
}
