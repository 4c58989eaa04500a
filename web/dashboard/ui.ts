// Small pieces every page uses: an error note, a failed load with its retry, a table that scrolls on a phone.
import { html } from 'htm/preact';
import type { ComponentChildren, VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

export function ErrorNote({ error, id }: { error: unknown; id?: string }): VNode | null {
  if (!error) return null;
  const message = error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error);
  const code = error instanceof ApiError ? error.code : undefined;
  return html`<p class="error" role="alert" id=${id}>${message}${code ? html` <span class="code">(${code})</span>` : null}</p>`;
}

export const fmtClock = (d: Date): string => d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/**
 * A load that failed: why, a Try again button, and (when `keptFrom` is set) that what the page still
 * shows is from an earlier load, so it is not taken for current.
 */
/** `what`: the subject and its verb, e.g. "The list below is". */
export function LoadFailed(props: { error: unknown; retry: () => void; busy?: boolean; keptFrom?: Date | undefined; what?: string; said?: boolean }): VNode | null {
  // `said`: the same failure is in a note just above, not repeated here.
  const { error, retry, busy = false, keptFrom, what = 'What is shown below is', said = false } = props;
  const button = useRef<HTMLButtonElement>(null);
  // The retry succeeded and the button went with the focus: the focus goes to the page's content, not
  // to <body> (where a removed element leaves it).
  useEffect(() => {
    const b = button.current;
    return () => {
      if (b && !b.isConnected && (document.activeElement === document.body || !document.activeElement)) document.getElementById('main')?.focus();
    };
  }, [Boolean(error)]);
  if (!error) return null;
  return html`<div class="load-failed" data-testid="load-failed">
    ${said ? null : html`<${ErrorNote} error=${error} />`}
    ${keptFrom ? html`<p class="stale">${what} from an earlier load (read at ${fmtClock(keptFrom)}) and may be out of date.</p>` : null}
    <button type="button" ref=${button} onClick=${() => busy || retry()}>${busy ? 'Trying again…' : 'Try again'}</button>
  </div>`;
}

/**
 * A table in a named region that scrolls sideways when the table is wider than the screen. Only then
 * is it a tab stop (so a keyboard can scroll it); a region that does not scroll would be a stop for nothing.
 */
export function TableWrap({ label, children, busy = false }: { label: string; children: ComponentChildren; busy?: boolean }): VNode {
  const box = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const check = () => setScrolls(el.scrollWidth > el.clientWidth + 1);
    const ro = new ResizeObserver(check);
    ro.observe(el);
    if (el.firstElementChild) ro.observe(el.firstElementChild);
    check();
    return () => ro.disconnect();
  }, []);
  return html`<div ref=${box} class="table-wrap" role="region" aria-label=${label} aria-busy=${busy} tabindex=${scrolls ? 0 : undefined}>${children}</div>`;
}
