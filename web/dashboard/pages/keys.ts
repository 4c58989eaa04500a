// The account's keys: create one (its secret shown once, with a copy button), revoke one after a confirmation.
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, query, session, signOutBecause, type Page, type Single } from '../api.js';
import { fmtTime } from '../format.js';
import { ErrorNote, Pager, TableWrap, usePaged } from '../ui.js';

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

const loadKeys = (cursor: string | undefined) => api<Page<KeyView>>(`/api/v1/api-keys${query({ cursor, limit: 20 })}`);

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
  return html`<div class="confirm" role="group" aria-label=${`Confirm revoking ${name ?? prefix}`} onKeyDown=${(e: KeyboardEvent) => e.key === 'Escape' && onNo()}>
    <span>Revoke${name ? html` “${name}”` : ' this key'}? Calls with it stop at once.${own ? ' It is the key this tab is signed in with: the tab signs out.' : ''}</span>
    <button type="button" class="danger" disabled=${busy} onClick=${onYes}>Yes, revoke</button>
    <button type="button" ref=${cancel} onClick=${onNo}>Cancel</button>
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
  const paged = usePaged(loadKeys, []);
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
      // The API's words name its own call; here the way to make room is the Revoke buttons below.
      setError(err instanceof ApiError && err.code === 'key_limit_reached' ? new Error("This account has as many active keys as its plan allows: revoke one below to create another.") : err);
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
        <input id="key-name" maxlength="100" value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} />
        <button type="submit" disabled=${busy}>Create key</button>
      </div>
    </form>
    ${created ? html`<${NewKeyBox} created=${created} onDone=${() => (setCreated(undefined), focusSoon('#key-name'))} />` : null}
    <${ErrorNote} error=${error ?? paged.error} />
    <${TableWrap} label="API keys" busy=${paged.loading}>
      <table data-testid="keys">
        <caption tabindex="-1">Keys of this account, newest first</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col" class="col-created">Created</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead>
        <tbody>
          ${(paged.page?.items ?? []).map(
            (k) => html`<tr data-key-id=${k.id}>
              <td class="key-name">${k.name ?? html`<span class="muted">(no name)</span>`}${isMine(k) ? html` <span class="badge">this session</span>` : null}</td>
              <td class="mono">${k.prefix}…</td>
              <td class="when col-created">${fmtTime(k.createdAt)}</td>
              <td>${k.revokedAt ? `revoked ${fmtTime(k.revokedAt)}` : 'active'}</td>
              <td>
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
