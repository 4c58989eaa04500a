// Async iteration over a paginated list: `for await (const item of list)` pages to the end (or to
// `maxItems`), following nextCursor; the credits the pages cost add up on the paginator.
import type { Result } from './result.js';
import type { Page } from './types.js';

export type PageFetcher<T> = (cursor: string | undefined) => Promise<Result<Page<T>>>;

export interface IterateOptions {
  /** Stop after this many items (no page is fetched beyond the one that reaches it). */
  maxItems?: number;
  /** Start from this cursor (a nextCursor kept from an earlier run). */
  cursor?: string;
}

export class Paginator<T> implements AsyncIterable<T> {
  /** Pages fetched so far in this run. */
  pages = 0;
  /** Credits the pages of this run cost. */
  creditsCharged = 0;
  /** The balance after the last page, when the gateway said. */
  creditsRemaining: number | undefined;
  /** The cursor of the page after the last one fetched (null at the end): keep it to resume. */
  nextCursor: string | null | undefined;

  constructor(
    private readonly fetchPage: PageFetcher<T>,
    private readonly opts: IterateOptions = {},
  ) {}

  /** Each page with its meta (credits, request id), in order. */
  async *byPage(): AsyncGenerator<Result<Page<T>>> {
    // Each run starts over from the first page (or the given cursor), and so do its counts.
    this.pages = 0;
    this.creditsCharged = 0;
    let cursor = this.opts.cursor;
    for (;;) {
      const page = await this.fetchPage(cursor);
      this.pages++;
      this.creditsCharged += page.credits?.charged ?? 0;
      if (page.credits) this.creditsRemaining = page.credits.remaining;
      this.nextCursor = page.data.nextCursor;
      yield page;
      if (!page.data.hasNextPage || !page.data.nextCursor) return;
      cursor = page.data.nextCursor;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    const max = this.opts.maxItems ?? Infinity;
    if (max <= 0) return;
    let n = 0;
    for await (const page of this.byPage()) {
      for (const item of page.data.items) {
        yield item;
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
