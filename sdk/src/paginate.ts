// Async iteration over a paginated list: `for await (const item of list)` pages to the end (or to
// `maxItems`), following nextCursor; the credits the pages cost add up on the paginator.
import { SdgError } from './errors.js';
import type { Result } from './result.js';
import type { Page } from './types.js';

/**
 * Fetches the page at `cursor`. `atMost`, when set, is how many items the run still wants: the page
 * asks for no more (its `limit` capped), so that a run stopped by maxItems ends on a page boundary
 * and its nextCursor goes on exactly after the last item given.
 */
export type PageFetcher<T> = (cursor: string | undefined, atMost: number | undefined) => Promise<Result<Page<T>>>;

export interface IterateOptions {
  /**
   * Stop after this many items. The last page asks for only as many as are still wanted, so no item
   * is bought and skipped, and nextCursor resumes right after the last one (by items or byPage()).
   */
  maxItems?: number | undefined;
  /** Start from this cursor (a nextCursor kept from an earlier run). */
  cursor?: string | undefined;
}

/** A page's `limit`: the list's own (or its default), capped at what the run still wants. */
export const pageLimit = (limit: number | undefined, fallback: number, atMost: number | undefined): number =>
  atMost === undefined ? (limit ?? fallback) : Math.max(1, Math.min(limit ?? fallback, atMost));

export class Paginator<T> implements AsyncIterable<T> {
  /** Pages fetched so far in this run. */
  pages = 0;
  /** Credits the pages answered in this run cost (a page whose answer was lost may have been charged too: NetworkError.maybeCharged). */
  creditsCharged = 0;
  /** The balance after the last page, when the gateway said. */
  creditsRemaining: number | undefined;
  /**
   * The cursor of the page after the last one fetched (null at the end): keep it to resume. A run
   * that ends at maxItems ends on a page boundary, so nothing is skipped; a loop that breaks out
   * part-way through a page resumes after that whole page.
   */
  nextCursor: string | null | undefined;

  constructor(
    private readonly fetchPage: PageFetcher<T>,
    private readonly opts: IterateOptions = {},
  ) {
    // Said here, naming it: passed on, a 1.5 would come back as the gateway's "limit must be integer".
    const max = opts.maxItems;
    if (max !== undefined && !(Number.isInteger(max) && max >= 0)) throw new SdgError(`maxItems must be a whole number of at least 0; got ${String(max)}.`);
  }

  /** Each page with its meta (credits, request id), in order, up to maxItems items in all. */
  async *byPage(): AsyncGenerator<Result<Page<T>>> {
    // Each run starts over from the first page (or the given cursor), and so do its counts.
    this.pages = 0;
    this.creditsCharged = 0;
    const max = this.opts.maxItems;
    if (max !== undefined && max <= 0) return;
    let cursor = this.opts.cursor;
    let items = 0;
    for (;;) {
      const page = await this.fetchPage(cursor, max === undefined ? undefined : max - items);
      this.pages++;
      this.creditsCharged += page.credits?.charged ?? 0;
      if (page.credits) this.creditsRemaining = page.credits.remaining;
      this.nextCursor = page.data.nextCursor;
      items += page.data.items.length;
      yield page;
      if (!page.data.hasNextPage || !page.data.nextCursor) return;
      if (max !== undefined && items >= max) return;
      cursor = page.data.nextCursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    const max = this.opts.maxItems ?? Infinity;
    let n = 0;
    for await (const page of this.byPage()) {
      for (const item of page.data.items) {
        yield item;
        // A gateway that answered more than the page asked for: the run still stops at maxItems.
        if (++n >= max) return;
      }
    }
  }

  /** Every item, in one array. */
  async toArray(): Promise<T[]> {
    const all: T[] = [];
    for await (const item of this) all.push(item);
    return all;
  }
}
