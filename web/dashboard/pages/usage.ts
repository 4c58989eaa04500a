// The ledger, newest first, page by page, optionally of one endpoint.
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, query, type Page, type Single } from '../api.js';
import { fmtNumber, fmtTime, isoLocal } from '../format.js';
import { Pager, usePaged } from '../paged.js';
import { LoadFailed, TableWrap } from '../ui.js';
import type { Summary } from './overview.js';

interface LedgerEntry {
  id: string;
  kind: 'grant' | 'charge' | 'refund';
  amount: number;
  balanceAfter: number;
  requestId: string | null;
  keyId: string | null;
  endpoint: string | null;
  note: string | null;
  createdAt: string;
}

/** The filter kept in the URL (#/usage?endpoint=…), so a reload or a shared link keeps it. */
const endpointInUrl = (): string => new URLSearchParams(location.hash.split('?')[1] ?? '').get('endpoint') ?? '';

export function UsagePage(): VNode {
  const [endpoint, setEndpointState] = useState(endpointInUrl);
  const setEndpoint = (v: string) => {
    setEndpointState(v);
    history.replaceState(null, '', `#/usage${v ? `?${new URLSearchParams({ endpoint: v })}` : ''}`);
  };
  // The URL leads: a link or the nav's "Usage" (a new hash, the page kept) sets the filter again.
  useEffect(() => {
    const follow = () => setEndpointState(endpointInUrl());
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);
  const [endpoints, setEndpoints] = useState<string[]>([]);
  const paged = usePaged((cursor) => api<Page<LedgerEntry>>(`/api/v1/usage${query({ cursor, limit: 25, endpoint })}`), [endpoint]);
  // The endpoints charged in the last year name the filter's choices.
  useEffect(() => {
    const to = new Date();
    to.setHours(24, 0, 0, 0);
    const from = new Date(to.getTime() - 365 * 86_400_000);
    api<Single<Summary>>(`/api/v1/usage/summary${query({ from: isoLocal(from), to: isoLocal(to), granularity: 'day' })}`).then(
      (s) => setEndpoints(s.data.endpoints.map((e) => e.endpoint).sort()),
      () => undefined,
    );
  }, []);
  return html`<h1>Usage</h1>
    <div class="filters">
      <label for="endpoint-filter">Endpoint</label>
      <select id="endpoint-filter" value=${endpoint} onChange=${(e: Event) => setEndpoint((e.target as HTMLSelectElement).value)}>
        <option value="">All entries (charges and grants)</option>
        ${(endpoint && !endpoints.includes(endpoint) ? [...endpoints, endpoint] : endpoints).map((e) => html`<option value=${e}>${e}</option>`)}
      </select>
    </div>
    <${LoadFailed} error=${paged.error} busy=${paged.loading} retry=${paged.reload} keptFrom=${paged.keptFrom} what="The ledger page below is" />
    <${TableWrap} label="Ledger" busy=${paged.loading}>
      <table data-testid="ledger" class="stack">
        <caption>Ledger entries, newest first${endpoint ? ` (${endpoint} only)` : ''}</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">Kind</th><th scope="col">Endpoint or note</th><th scope="col" class="num">Credits</th><th scope="col" class="num">Balance after</th><th scope="col">Request</th></tr></thead>
        <tbody>
          ${(paged.page?.items ?? []).map(
            (r) => html`<tr><td class="when" data-label="Time">${fmtTime(r.createdAt)}</td><td data-label="Kind">${r.kind}</td><td class="text" data-label="Endpoint or note">${r.endpoint || r.note?.trim() || '—'}</td>
              <td class="num" data-label="Credits">${r.amount > 0 ? '+' : ''}${fmtNumber(r.amount)}</td><td class="num" data-label="Balance after">${fmtNumber(r.balanceAfter)}</td><td class="mono text" data-label="Request">${r.requestId ?? '—'}</td></tr>`,
          )}
        </tbody>
      </table>
    <//>
    ${paged.page && paged.page.items.length === 0 ? html`<p class="empty">No entries.</p>` : null}
    <${Pager} paged=${paged} label="Ledger" />`;
}
