// Exports: generate one for a range picked here, follow it until it completes, download it; the list
// with sizes, counts and sha256.
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useState } from 'preact/hooks';
import { api, query, sleep, type Page, type Single } from '../api.js';
import { fmtBytes, fmtNumber, fmtTime, isoLocal, localInputValue } from '../format.js';
import { Pager, usePaged } from '../paged.js';
import { ErrorNote, LoadFailed, TableWrap } from '../ui.js';

interface ExportRecord {
  id: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  startDate: string;
  endDate: string;
  tweetCount: number | null;
  sizeBytes: number | null;
  sha256: string | null;
  createdAt: string;
  completedAt: string | null;
  error: string | null;
}

/** Asks for a fresh link (the API call carries the key; the link itself needs none) and follows it. */
async function download(id: string): Promise<void> {
  const link = (await api<Single<{ url: string }>>(`/social/v1/bulk-export/exports/${encodeURIComponent(id)}/download`)).data;
  const a = document.createElement('a');
  a.href = link.url;
  a.download = `export-${id}.jsonl.gz`;
  a.rel = 'noopener noreferrer';
  document.body.append(a);
  a.click();
  a.remove();
}

function DownloadButton({ id, onError }: { id: string; onError: (e: unknown) => void }): VNode {
  const [busy, setBusy] = useState(false);
  const go = () => {
    setBusy(true);
    download(id).then(
      () => setBusy(false),
      (e: unknown) => (setBusy(false), onError(e)),
    );
  };
  return html`<button type="button" disabled=${busy} onClick=${go} aria-label=${`Download export ${id}`}>Download</button>`;
}

export function ExportsPage(): VNode {
  const now = new Date();
  now.setMinutes(0, 0, 0);
  const [start, setStart] = useState(localInputValue(new Date(now.getTime() - 24 * 3_600_000)));
  const [end, setEnd] = useState(localInputValue(now));
  const [current, setCurrent] = useState<ExportRecord>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const paged = usePaged((cursor) => api<Page<ExportRecord>>(`/social/v1/bulk-export/exports${query({ cursor, limit: 10 })}`), []);

  const generate = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    const s = new Date(start);
    const t = new Date(end);
    if (Number.isNaN(s.getTime()) || Number.isNaN(t.getTime())) return setError(new Error('Pick both a start and an end.'));
    if (s >= t) return setError(new Error('The end must be after the start.'));
    if (t.getTime() - s.getTime() > 24 * 3_600_000) return setError(new Error('An export covers at most 24 hours.'));
    setBusy(true);
    try {
      let x = (await api<Single<ExportRecord>>('/social/v1/bulk-export/exports/generate', { method: 'POST', body: { startDate: isoLocal(s), endDate: isoLocal(t) } })).data;
      setCurrent(x);
      paged.reload();
      for (let wait = 300; x.status === 'queued' || x.status === 'running'; wait = Math.min(2_000, wait * 1.5)) {
        await sleep(wait);
        x = (await api<Single<ExportRecord>>(`/social/v1/bulk-export/exports/${encodeURIComponent(x.id)}`)).data;
        setCurrent(x);
      }
      paged.reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  // The same failure (the gateway unreachable) is said once, above the list.
  const sameAsAbove = error instanceof Error && paged.error instanceof Error && error.message === paged.error.message;
  return html`<h1>Exports</h1>
    <p class="help">An export holds the stored tweets of your watched accounts created in the range (at most 24 hours), as gzip JSON Lines.</p>
    <form class="range" onSubmit=${generate}>
      <div><label for="export-start">Start (your local time)</label>
        <input id="export-start" type="datetime-local" required value=${start} onInput=${(e: Event) => setStart((e.target as HTMLInputElement).value)} /></div>
      <div><label for="export-end">End (exclusive)</label>
        <input id="export-end" type="datetime-local" required value=${end} onInput=${(e: Event) => setEnd((e.target as HTMLInputElement).value)} /></div>
      <button type="submit" disabled=${busy}>${busy ? 'Working…' : 'Generate export'}</button>
    </form>
    <${ErrorNote} error=${error} />
    ${current
      ? html`<section class="card wide" aria-labelledby="current-export" data-testid="current-export" data-status=${current.status}>
          <h2 id="current-export">Export ${current.id}</h2>
          <p role="status" class="text">Status: <strong>${current.status}</strong>${current.status === 'completed' ? ` (${fmtNumber(current.tweetCount)} tweets, ${fmtBytes(current.sizeBytes)})` : ''}${current.error ? ` (${current.error})` : ''}</p>
          ${current.status === 'queued' || current.status === 'running' ? html`<progress aria-label="Export under way"></progress>` : null}
          ${current.status === 'completed'
            ? html`<p>sha256 <code class="hash" data-testid="current-sha256">${current.sha256}</code></p><${DownloadButton} id=${current.id} onError=${setError} />`
            : null}
        </section>`
      : null}
    <h2>Your exports</h2>
    <${LoadFailed} error=${paged.error} said=${sameAsAbove} busy=${paged.loading} retry=${paged.reload} keptFrom=${paged.keptFrom} what="The list below is" />
    <${TableWrap} label="Exports" busy=${paged.loading}>
      <table data-testid="exports" class="stack">
        <thead><tr><th scope="col">Id</th><th scope="col">Range</th><th scope="col">Status</th><th scope="col" class="num">Tweets</th><th scope="col" class="num">Size</th><th scope="col" class="col-hash">sha256</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
        <tbody>
          ${(paged.page?.items ?? []).map(
            (x) => html`<tr data-export-id=${x.id}><td class="mono text" data-label="Id">${x.id}</td><td data-label="Range">${fmtTime(x.startDate)} – ${fmtTime(x.endDate)}</td><td data-label="Status">${x.status}</td>
              <td class="num" data-label="Tweets">${fmtNumber(x.tweetCount)}</td><td class="num" data-label="Size">${fmtBytes(x.sizeBytes)}</td><td class="col-hash" data-label="sha256"><code class="hash">${x.sha256 ?? '—'}</code></td>
              <td class="actions">${x.status === 'completed' ? html`<${DownloadButton} id=${x.id} onError=${setError} />` : null}</td></tr>`,
          )}
        </tbody>
      </table>
    <//>
    ${paged.page && paged.page.items.length === 0 && paged.pageNumber === 1 ? html`<p class="empty">No export yet.</p>` : null}
    <${Pager} paged=${paged} label="Exports" />`;
}
