// Small pieces every page uses: an error note, a status line, a pager, a table that scrolls on a phone.
import { html } from 'htm/preact';
import type { ComponentChildren, VNode } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, type Page } from './api.js';

export function ErrorNote({ error }: { error: unknown }): VNode | null {
  if (!error) return null;
  const message = error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error);
  const code = error instanceof ApiError ? error.code : undefined;
  return html`<p class="error" role="alert">${message}${code ? html` <span class="code">(${code})</span>` : null}</p>`;
}

export function TableWrap({ label, children, busy = false }: { label: string; children: ComponentChildren; busy?: boolean }): VNode {
  // A region with a name and a tab stop, so a wide table scrolls by keyboard on a narrow screen.
  return html`<div class="table-wrap" role="region" aria-label=${label} aria-busy=${busy} tabindex="0">${children}</div>`;
}

export interface Paged<T> {
  page: Page<T> | undefined;
  error: unknown;
  loading: boolean;
  pageNumber: number;
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
  // Busy until the answer for exactly this list, page and reload has arrived (true from the very
  // render that changed them, so aria-busy never claims a stale table is current).
  const want = `${list}|${cursor ?? ''}|${tick}`;
  const [done, setDone] = useState<{ key: string; page?: Page<T>; error?: unknown }>({ key: '' });
  useEffect(() => {
    let live = true;
    load(cursor).then(
      (p) => live && setDone({ key: want, page: p }),
      (e: unknown) => live && setDone((d) => ({ key: want, ...(d.page ? { page: d.page } : {}), error: e })),
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
