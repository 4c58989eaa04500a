// Keyset paging of a list (a stack of cursors) and its pager.
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Page } from './api.js';

export interface Paged<T> {
  page: Page<T> | undefined;
  error: unknown;
  loading: boolean;
  pageNumber: number;
  /** When a reload failed and the rows shown are the earlier load's: when that load was. */
  keptFrom: Date | undefined;
  next(): void;
  prev(): void;
  reload(): void;
}

/**
 * Keyset paging: a stack of the cursors that led to each page, so Previous goes back exactly. The
 * stack belongs to one list: when `deps` (a filter) change, paging starts again from the top.
 */
export function usePaged<T>(load: (cursor: string | undefined) => Promise<Page<T>>, deps: unknown[]): Paged<T> {
  const list = JSON.stringify(deps);
  const [stack, setStack] = useState<{ list: string; cursors: Array<string | undefined> }>({ list, cursors: [undefined] });
  const cursors = stack.list === list ? stack.cursors : [undefined];
  const [tick, setTick] = useState(0);
  const cursor = cursors[cursors.length - 1];
  // Which rows (`at`: this list's page) and which load of them (`want`). Busy until the answer for
  // exactly this list, page and reload has arrived (true from the very render that changed them, so
  // aria-busy never claims a stale table is current).
  const at = `${list}|${cursor ?? ''}`;
  const want = `${at}|${tick}`;
  const [done, setDone] = useState<{ key: string; at?: string; page?: Page<T>; loadedAt?: Date; error?: unknown }>({ key: '' });
  useEffect(() => {
    let live = true;
    load(cursor).then(
      (p) => {
        if (!live) return;
        // A page emptied meanwhile (its last rows removed): back to the one before, not an empty "Page 2".
        if (p.items.length === 0 && cursors.length > 1) return setStack({ list, cursors: cursors.slice(0, -1) });
        setDone({ key: want, at, page: p, loadedAt: new Date() });
      },
      // A failed reload keeps the same page's rows (marked as earlier); another list's or page's rows are not kept.
      (e: unknown) => live && setDone((d) => (d.at === at && d.page ? { ...d, key: want, error: e } : { key: want, at, error: e })),
    );
    return () => {
      live = false;
    };
  }, [want]);
  const page = done.page;
  const error = done.error;
  const loading = done.key !== want;
  const nextCursor = page?.nextCursor ?? undefined;
  return {
    page,
    error,
    loading,
    pageNumber: cursors.length,
    keptFrom: error && page ? done.loadedAt : undefined,
    next: useCallback(() => nextCursor && setStack({ list, cursors: [...cursors, nextCursor] }), [nextCursor, list, cursors]),
    prev: useCallback(() => setStack({ list, cursors: cursors.length > 1 ? cursors.slice(0, -1) : cursors }), [list, cursors]),
    reload: useCallback(() => setTick((t) => t + 1), []),
  };
}

export function Pager<T>({ paged, label }: { paged: Paged<T>; label: string }): VNode {
  return html`<nav class="pager" aria-label=${`${label} pages`}>
    <button type="button" onClick=${paged.prev} disabled=${paged.pageNumber <= 1 || paged.loading}>Previous</button>
    <span aria-live="polite">Page ${paged.pageNumber}</span>
    <button type="button" onClick=${paged.next} disabled=${!paged.page?.hasNextPage || paged.loading}>Next</button>
  </nav>`;
}
