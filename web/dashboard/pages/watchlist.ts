// The watchlist: its accounts page by page; add by pasting usernames or ids (sent in batches of 100,
// each item's outcome shown as its batch completes); remove one.
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useLayoutEffect, useState } from 'preact/hooks';
import { ApiError, api, query, sleep, type Page, type Single } from '../api.js';
import { fmtTime } from '../format.js';
import { Pager, usePaged } from '../paged.js';
import { ErrorNote, LoadFailed, TableWrap } from '../ui.js';

interface Entry {
  socialUserId: string;
  username: string;
  addedAt: string;
}
interface Item {
  socialUserId: string | null;
  username: string | null;
  status: string;
  error: string | null;
}
interface Batch {
  batchId: string;
  status: 'queued' | 'processing' | 'completed' | 'failed';
  total: number;
  processed: number;
  succeeded: number;
  failed: number;
  items: Item[];
}
type Wanted = { username: string } | { socialUserId: string };

const BATCH = 100;
const USERNAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,252}$/;
const NUMERIC = /^[0-9]{1,19}$/;

/** Splits pasted text into usernames and ids; anything else is refused here with a reason. */
export function parsePasted(text: string): { wanted: Wanted[]; refused: string[] } {
  const seen = new Set<string>();
  const wanted: Wanted[] = [];
  const refused: string[] = [];
  for (const raw of text.split(/[\s,;]+/)) {
    const t = raw.replace(/^@/, '');
    if (!t) continue;
    const k = t.toLowerCase();
    if (seen.has(k)) continue;
    seen.add(k);
    if (NUMERIC.test(t)) wanted.push({ socialUserId: t });
    else if (USERNAME.test(t)) wanted.push({ username: t });
    else refused.push(raw);
  }
  return { wanted, refused };
}

const OUTCOME: Record<string, string> = {
  pending: 'waiting',
  added: 'added',
  already_present: 'already on the watchlist',
  removed: 'removed',
  not_present: 'was not on the watchlist',
  not_found: 'no such account',
  limit_exceeded: "over the plan's watchlist limit",
  failed: 'failed',
};

/** A batch's heading: its status, or what became of it when a call failed (ApiError status 0: no answer). */
function batchState(b: { batch?: Batch; error?: unknown }): string {
  if (!b.error) return b.batch?.status ?? 'sending';
  if (b.batch) return 'sent, but its progress could not be read';
  if (b.error instanceof ApiError && b.error.status !== 0) return 'refused (its lines are back in the box)';
  return 'not sent: the gateway could not be reached (its lines are back in the box)';
}

async function follow(batchId: string, onUpdate: (b: Batch) => void): Promise<Batch> {
  for (let wait = 300; ; wait = Math.min(2_000, wait * 1.5)) {
    const b = (await api<Single<Batch>>(`/social/v1/bulk-export/watchlist/batch/${encodeURIComponent(batchId)}`)).data;
    onUpdate(b);
    if (b.status === 'completed' || b.status === 'failed') return b;
    await sleep(wait);
  }
}

export function WatchlistPage(): VNode {
  const [text, setText] = useState('');
  const [batches, setBatches] = useState<Array<{ n: number; of: number; batch?: Batch; error?: unknown }>>([]);
  const [refused, setRefused] = useState<string[]>([]);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<unknown>();
  const [removing, setRemoving] = useState<string>();
  // After a removal: what is said (a live region) and the row whose place the focus goes back to.
  const [said, setSaid] = useState('');
  const [refocus, setRefocus] = useState<{ row: number; page: number }>();
  const paged = usePaged((cursor) => api<Page<Entry>>(`/social/v1/bulk-export/watchlist${query({ cursor, limit: 20 })}`), []);

  const add = async (e: Event) => {
    e.preventDefault();
    const { wanted, refused: bad } = parsePasted(text);
    setRefused(bad);
    setError(undefined);
    if (wanted.length === 0) return setError(new Error(bad.length ? 'Nothing to add: no line is a username or a numeric id.' : 'Paste usernames or ids first.'));
    const chunks: Wanted[][] = [];
    for (let i = 0; i < wanted.length; i += BATCH) chunks.push(wanted.slice(i, i + BATCH));
    setBatches(chunks.map((_, i) => ({ n: i + 1, of: chunks.length })));
    setRunning(true);
    const set = (i: number, v: { batch?: Batch; error?: unknown }) => setBatches((bs) => bs.map((b, j) => (j === i ? { ...b, ...v } : b)));
    // One batch at a time: each shows its outcomes as soon as it completes, and the plan's limit is
    // applied in the order pasted. The lines of a batch the gateway did not take stay in the box, to
    // send again; those it took are cleared.
    const unsent: Wanted[] = [];
    for (let i = 0; i < chunks.length; i++) {
      let sent = false;
      try {
        const b = (await api<Single<Batch>>('/social/v1/bulk-export/watchlist/batch', { method: 'POST', body: { items: chunks[i] } })).data;
        sent = true;
        set(i, { batch: b });
        await follow(b.batchId, (x) => set(i, { batch: x }));
      } catch (err) {
        if (!sent) unsent.push(...chunks[i]!);
        set(i, { error: err });
      }
    }
    setRunning(false);
    setText(unsent.map((w) => ('username' in w ? w.username : w.socialUserId)).join('\n'));
    paged.reload();
  };

  const remove = async (entry: Entry, row: number) => {
    if (removing !== undefined) return;
    setRemoving(entry.socialUserId);
    setSaid('');
    try {
      const b = (await api<Single<Batch>>('/social/v1/bulk-export/watchlist/batch-remove', { method: 'POST', body: { socialUserIds: [entry.socialUserId] } })).data;
      await follow(b.batchId, () => undefined);
      setSaid(`Stopped watching ${entry.username}.`);
      setRefocus({ row, page: paged.pageNumber });
      paged.reload();
    } catch (err) {
      setError(err);
    } finally {
      setRemoving(undefined);
    }
  };

  // Once the list is read again, the focus goes to the Remove button now in the removed row's place
  // (the row before it when it was the last, on the page before when its page emptied; the list's
  // heading when none is left), not to <body>. Before the new rows are painted: rows are not keyed,
  // so until then the focus sat on whichever row now filled the removed one's button, and a screen
  // reader could name that one first.
  useLayoutEffect(() => {
    if (refocus === undefined || paged.loading) return;
    setRefocus(undefined);
    const buttons = document.querySelectorAll<HTMLElement>('[data-testid="watchlist"] tbody button');
    const row = paged.pageNumber < refocus.page ? buttons.length - 1 : Math.min(refocus.row, buttons.length - 1);
    (buttons[row] ?? document.getElementById('watched-title'))?.focus();
  }, [refocus, paged.loading]);

  return html`<h1>Watchlist</h1>
    <form onSubmit=${add}>
      <label for="paste">Usernames or numeric ids to watch</label>
      <textarea id="paste" rows="5" value=${text} onInput=${(e: Event) => setText((e.target as HTMLTextAreaElement).value)} aria-describedby="paste-help"></textarea>
      <p id="paste-help" class="help">One per line, or separated by spaces or commas; a leading @ is fine. They go to the gateway in batches of ${BATCH}.</p>
      <button type="submit" disabled=${running}>${running ? 'Adding…' : 'Add to watchlist'}</button>
    </form>
    <${ErrorNote} error=${error} />
    ${refused.length
      ? html`<div class="refused" role="alert"><p>Not sent (neither a username nor a numeric id):</p><ul>${refused.map((r) => html`<li class="mono">${r}</li>`)}</ul></div>`
      : null}
    ${batches.map(
      (b) => html`<section class="batch" aria-label=${`Batch ${b.n} of ${b.of}`} data-testid="batch">
        <h2>Batch ${b.n} of ${b.of}: ${batchState(b)}</h2>
        <${ErrorNote} error=${b.error} />
        ${b.batch
          ? html`<p><progress max=${b.batch.total} value=${b.batch.processed} aria-label=${`Batch ${b.n} progress`}></progress>
                ${' '}${b.batch.processed} of ${b.batch.total} done: ${b.batch.succeeded} succeeded, ${b.batch.failed} failed</p>
              <${TableWrap} label=${`Outcomes of batch ${b.n}`}>
                <table>
                  <thead><tr><th scope="col">Username</th><th scope="col">Id</th><th scope="col">Outcome</th></tr></thead>
                  <tbody>${b.batch.items.map(
                    (it) => html`<tr data-status=${it.status}><td class="username">${it.username ?? '—'}</td><td class="mono text">${it.socialUserId ?? '—'}</td>
                      <td class="text">${OUTCOME[it.status] ?? it.status}${it.error ? `: ${it.error}` : ''}</td></tr>`,
                  )}</tbody>
                </table>
              <//>`
          : null}
      </section>`,
    )}
    <h2 id="watched-title" tabindex="-1">Watched accounts</h2>
    <p role="status" class="help">${said}</p>
    <${LoadFailed} error=${paged.error} busy=${paged.loading} retry=${paged.reload} keptFrom=${paged.keptFrom} what="The list below is" />
    <${TableWrap} label="Watched accounts" busy=${paged.loading}>
      <table data-testid="watchlist" class="stack">
        <thead><tr><th scope="col">Username</th><th scope="col">Id</th><th scope="col">Added</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
        <tbody>
          ${(paged.page?.items ?? []).map(
            (w, i) => html`<tr><td class="username" data-label="Username">${w.username}</td><td class="mono text" data-label="Id">${w.socialUserId}</td><td class="when" data-label="Added">${fmtTime(w.addedAt)}</td>
              <td class="actions">${
                // The button being pressed stays enabled (aria-disabled) so that it keeps the focus meanwhile.
                removing === w.socialUserId
                  ? html`<button type="button" aria-disabled="true" aria-label=${`Stop watching ${w.username}`}>Removing…</button>`
                  : html`<button type="button" disabled=${removing !== undefined} onClick=${() => remove(w, i)} aria-label=${`Stop watching ${w.username}`}>Remove</button>`
              }</td></tr>`,
          )}
        </tbody>
      </table>
    <//>
    ${paged.page && paged.page.items.length === 0 && paged.pageNumber === 1 ? html`<p class="empty">No account is watched yet.</p>` : null}
    <${Pager} paged=${paged} label="Watchlist" />`;
}
