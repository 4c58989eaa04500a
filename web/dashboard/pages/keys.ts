// The account's keys: create one (its secret shown once, with a copy button), revoke one after a confirmation.
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, query, session, signOutBecause, type Page, type Single } from '../api.js';
import { fmtTime } from '../format.js';
import { Pager, usePaged } from '../paged.js';
import { ErrorNote, LoadFailed, TableWrap } from '../ui.js';

interface KeyView {
  id: string;
  name: string | null;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}
interface NewKey extends KeyView {
  key: string | null;
}

const NAME_MAX = 100;

/** The gateway's refusal of a name (its words name the field, for developers) in plain words. */
function nameError(err: unknown): unknown {
  if (!(err instanceof ApiError)) return err;
  if (err.code === 'key_limit_reached') return new Error('This account has as many active keys as its plan allows: revoke one below to create another.');
  const fields = (err.details as { fields?: Array<{ field?: string }> } | undefined)?.fields ?? [];
  if (err.code === 'invalid_request' && fields.some((f) => f.field === 'body.name')) {
    return new Error(`This name cannot be used: a key's name needs at least one visible character, at most ${NAME_MAX} in all, and no control or text-direction characters (which can come along when text is copied). Type the name again, or leave it empty.`);
  }
  return err;
}

/** Which keys the table shows: all, or only the active or the revoked ones (the API's ?status=). */
type Shown = '' | 'active' | 'revoked';
const SHOWN_WORDS: Record<Shown, string> = { '': '', active: ' (active only)', revoked: ' (revoked only)' };

const loadKeys = (cursor: string | undefined, status: Shown) => api<Page<KeyView>>(`/api/v1/api-keys${query({ cursor, limit: 20, status: status || undefined })}`);

function NewKeyBox({ created, onDone }: { created: NewKey; onDone: () => void }): VNode {
  const [copied, setCopied] = useState<string>();
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const copy = async () => {
    const text = created.key ?? '';
    try {
      await navigator.clipboard.writeText(text);
      setCopied('Copied to the clipboard.');
    } catch {
      input.current?.select();
      setCopied('Selected: press Ctrl+C (or ⌘C) to copy.');
    }
  };
  return html`<section class="secret" aria-labelledby="new-key-title">
    <h2 id="new-key-title">Your new key${created.name ? html` “${created.name}”` : null}</h2>
    <p><strong>Copy it now: it is shown only this once.</strong> The gateway keeps only a hash of it.</p>
    <label for="new-key">Secret</label>
    <div class="row">
      <input id="new-key" ref=${input} readonly value=${created.key ?? ''} class="mono" data-testid="new-key-secret" onFocus=${(e: Event) => (e.target as HTMLInputElement).select()} />
      <button type="button" onClick=${copy}>Copy</button>
    </div>
    <p role="status" class="help">${copied ?? ''}</p>
    <button type="button" onClick=${onDone}>I have copied it</button>
  </section>`;
}

/** The question before a revocation; the focus goes to Cancel, the safe answer, and Escape cancels. */
function Confirm({ name, prefix, own, busy, onYes, onNo }: { name: string | null; prefix: string; own: boolean; busy: boolean; onYes: () => void; onNo: () => void }): VNode {
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => cancel.current?.focus(), []);
  // The warning describes the group and both answers, so it is read with the button the focus lands on.
  const warning = `revoke-warning-${prefix}`;
  return html`<div class="confirm" role="group" aria-label=${`Confirm revoking ${name ?? prefix}`} aria-describedby=${warning} onKeyDown=${(e: KeyboardEvent) => e.key === 'Escape' && onNo()}>
    <span id=${warning} class="key-name">Revoke${name ? html` “${name}”` : ' this key'}? Calls with it stop at once.${own ? ' It is the key this tab is signed in with: the tab signs out.' : ''}</span>
    <button type="button" class="danger" disabled=${busy} onClick=${onYes} aria-describedby=${warning}>Yes, revoke</button>
    <button type="button" ref=${cancel} onClick=${onNo} aria-describedby=${warning}>Cancel</button>
  </div>`;
}

/** Moves the focus after the DOM has the element (the next frame), so a keyboard user is not left on <body>. */
const focusSoon = (selector: string) => requestAnimationFrame(() => (document.querySelector(selector) as HTMLElement | null)?.focus());

export function KeysPage(): VNode {
  const [name, setName] = useState('');
  const [created, setCreated] = useState<NewKey>();
  const [error, setError] = useState<unknown>();
  const [confirming, setConfirming] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [shown, setShown] = useState<Shown>('');
  const paged = usePaged((cursor) => loadKeys(cursor, shown), [shown]);
  const mine = session.key() ?? '';
  const isMine = (k: KeyView) => mine.startsWith(k.prefix) && !k.revokedAt;

  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const r = await api<Single<NewKey>>('/api/v1/api-keys', { method: 'POST', body: name.trim() ? { name: name.trim() } : {} });
      setCreated(r.data);
      setName('');
      setError(undefined);
      paged.reload();
    } catch (err) {
      // The API's words name its own call and fields; here the way out is in the page's words.
      setError(nameError(err));
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (k: KeyView) => {
    setBusy(true);
    try {
      await api<Single<KeyView>>(`/api/v1/api-keys/${encodeURIComponent(k.id)}`, { method: 'DELETE' });
      if (isMine(k)) return signOutBecause(`You revoked ${k.name ? `“${k.name}”, ` : ''}the key this tab was signed in with.`);
      setConfirming(undefined);
      setError(undefined);
      paged.reload();
      // The row's button is gone with the key's status; the table is where the keyboard user was.
      focusSoon('[data-testid="keys"] caption');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return html`<h1>API keys</h1>
    <form class="inline-form" onSubmit=${create}>
      <label for="key-name">Name of the new key (optional)</label>
      <div class="row">
        <input id="key-name" maxlength=${NAME_MAX} value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} aria-describedby="key-name-help" />
        <button type="submit" disabled=${busy}>Create key</button>
      </div>
      <p id="key-name-help" class="help" aria-live="polite">${
        // The field stops at the limit (a longer paste is cut): said, rather than cut silently.
        name.length >= NAME_MAX ? html`<strong>The name is at its limit of ${NAME_MAX} characters: anything longer was cut off.</strong>` : `At most ${NAME_MAX} characters.`
      }</p>
    </form>
    ${created ? html`<${NewKeyBox} created=${created} onDone=${() => (setCreated(undefined), focusSoon('#key-name'))} />` : null}
    <${ErrorNote} error=${error} />
    <div class="filters">
      <label for="keys-shown">Show</label>
      <select id="keys-shown" value=${shown} onChange=${(e: Event) => setShown((e.target as HTMLSelectElement).value as Shown)}>
        <option value="">All keys</option>
        <option value="active">Active keys</option>
        <option value="revoked">Revoked keys</option>
      </select>
    </div>
    <${LoadFailed} error=${paged.error} busy=${paged.loading} retry=${paged.reload} keptFrom=${paged.keptFrom} what="The list of keys below is" />
    <${TableWrap} label="API keys" busy=${paged.loading}>
      <table data-testid="keys" class="stack">
        <caption tabindex="-1">Keys of this account, newest first${SHOWN_WORDS[shown]}</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col" class="col-created">Created</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
        <tbody>
          ${(paged.page?.items ?? []).map(
            (k) => html`<tr data-key-id=${k.id}>
              <td class="key-name" data-label="Name">${k.name ?? html`<span class="muted">(no name)</span>`}${isMine(k) ? html` <span class="badge">this session</span>` : null}</td>
              <td class="mono text" data-label="Prefix">${k.prefix}…</td>
              <td class="when col-created" data-label="Created">${fmtTime(k.createdAt)}</td>
              <td data-label="Status">${k.revokedAt ? `revoked ${fmtTime(k.revokedAt)}` : 'active'}</td>
              <td class="actions">
                ${k.revokedAt
                  ? null
                  : confirming === k.id
                    ? html`<${Confirm} name=${k.name} prefix=${k.prefix} own=${isMine(k)} busy=${busy} onYes=${() => revoke(k)} onNo=${() => (setConfirming(undefined), focusSoon(`tr[data-key-id="${k.id}"] button`))} />`
                    : html`<button type="button" onClick=${() => setConfirming(k.id)} aria-label=${`Revoke ${k.name ?? k.prefix}`}>Revoke</button>`}
              </td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>
    <${Pager} paged=${paged} label="Keys" />`;
}
