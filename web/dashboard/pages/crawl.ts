// The crawl: the cycle under way with its progress, and the last completed one; refreshed every few seconds.
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { fmtNumber, fmtTime } from '../format.js';
import { ErrorNote } from '../ui.js';

interface Progress {
  id: string;
  startedAt: string;
  accountsTargeted: number;
  accountsCompleted: number;
  accountsFailed: number;
  tweetsIngested: number;
}
interface CrawlStatus {
  currentCycle: (Progress & { status: 'running'; percentComplete: number }) | null;
  lastCompletedCycle: (Progress & { completedAt: string; durationMinutes: number; tweetsUpdated: number }) | null;
  schedule: { intervalHours: number; nextExpectedAt: string };
}

const Row = ({ label, value }: { label: string; value: string }) => html`<div><dt>${label}</dt><dd>${value}</dd></div>`;

export function CrawlPage(): VNode {
  const [status, setStatus] = useState<CrawlStatus>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = () =>
      api<{ data: CrawlStatus }>('/social/v1/bulk-export/crawl-status')
        .then((r) => live && (setStatus(r.data), setError(undefined)), (e: unknown) => live && setError(e))
        .finally(() => {
          if (live) timer = setTimeout(load, 3_000);
        });
    load();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, []);
  const cur = status?.currentCycle;
  const last = status?.lastCompletedCycle;
  return html`<h1>Crawl</h1>
    <p class="help">One crawl serves every watchlist on this gateway: each cycle visits every account any of its users watches, stores its new tweets and refreshes recent ones. The figures below are the whole gateway's, not this account's alone.</p>
    <${ErrorNote} error=${error} />
    ${!status && !error ? html`<p role="status">Loading…</p>` : null}
    ${status
      ? html`<section class="card wide" aria-labelledby="cur-title" data-testid="current-cycle">
            <h2 id="cur-title">Current cycle</h2>
            ${cur
              ? html`<label for="crawl-progress">${cur.percentComplete.toFixed(1)}% complete</label>
                  <progress id="crawl-progress" max="100" value=${cur.percentComplete}></progress>
                  <dl class="facts">
                    <${Row} label="Started" value=${fmtTime(cur.startedAt)} />
                    <${Row} label="Accounts" value=${`${fmtNumber(cur.accountsCompleted)} done, ${fmtNumber(cur.accountsFailed)} failed, of ${fmtNumber(cur.accountsTargeted)}`} />
                    <${Row} label="Tweets stored" value=${fmtNumber(cur.tweetsIngested)} />
                  </dl>`
              : html`<p>No cycle is running. The next one is expected ${fmtTime(status.schedule.nextExpectedAt)}.</p>`}
          </section>
          <section class="card wide" aria-labelledby="last-title" data-testid="last-cycle">
            <h2 id="last-title">Last completed cycle</h2>
            ${last
              ? html`<dl class="facts">
                  <${Row} label="Started" value=${fmtTime(last.startedAt)} />
                  <${Row} label="Completed" value=${`${fmtTime(last.completedAt)} (${last.durationMinutes} min)`} />
                  <${Row} label="Accounts" value=${`${fmtNumber(last.accountsCompleted)} done, ${fmtNumber(last.accountsFailed)} failed, of ${fmtNumber(last.accountsTargeted)}`} />
                  <${Row} label="Tweets stored" value=${fmtNumber(last.tweetsIngested)} />
                  <${Row} label="Tweets updated" value=${fmtNumber(last.tweetsUpdated)} />
                </dl>`
              : html`<p>No cycle has completed yet.</p>`}
          </section>
          <p class="help">A cycle starts every ${status.schedule.intervalHours} hours; the next is expected ${fmtTime(status.schedule.nextExpectedAt)}.</p>`
      : null}`;
}
