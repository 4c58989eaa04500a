import type { CursorCodec } from './cursor.js';

/**
 * The paginated envelope of a keyset page read from the store: `rows` holds up to limit + 1 rows
 * (the extra one only says a next page exists); the cursor carries the last row's position.
 */
export function keysetPage<R, I>(
  request: { id: string },
  cursors: CursorCodec,
  list: string,
  rows: R[],
  limit: number,
  toItem: (row: R) => I,
  positionOf: (row: R) => unknown,
) {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const hasNextPage = rows.length > limit && last !== undefined;
  return {
    items: page.map(toItem),
    hasNextPage,
    nextCursor: hasNextPage ? cursors.encode(list, positionOf(last)) : null,
    requestId: request.id,
    cached: false,
  };
}
