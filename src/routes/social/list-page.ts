import type { FastifyRequest } from 'fastify';
import type { CursorCodec } from '../../pagination/cursor.js';
import type { Page } from '../../social/social-service.js';

interface Position {
  p: string;
}

/** Reads `cursor` into the source position it wraps; the list name binds it to this list. */
export function positionOf(cursors: CursorCodec, list: string, cursor: string | undefined): string | undefined {
  return cursor === undefined ? undefined : cursors.decode<Position>(list, cursor).p;
}

/**
 * The paginated envelope of a page; nextCursor is null exactly when there is no next page. `carried`
 * is signed into the cursor beside the position (a timeline's filters).
 */
export function pageEnvelope<T>(cursors: CursorCodec, list: string, request: FastifyRequest, page: Page<T>, carried: Record<string, unknown> = {}) {
  return {
    items: page.items,
    hasNextPage: page.next !== undefined,
    nextCursor: page.next !== undefined ? cursors.encode(list, { ...carried, p: page.next } satisfies Position) : null,
    requestId: request.id,
    cached: page.cached,
  };
}
