// The crawl: the cycle under way with its progress, and the last completed one; refreshed every few
// seconds while the tab is shown (poll.ts: longer waits while the gateway refuses).
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { api } from '../api.js';
import { fmtNumber, fmtTime } from '../format.js';
import { usePolled } from '../poll.js';
import { LoadFailed } from '../ui.js';

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

/** Durations are whole minutes (rounded): 0 is under half a minute. */
const fmtMinutes = (n: number): string => (n < 1 ? 'under a minute' : `${fmtNumber(n)} min`);

const loadStatus = () => api<{ data: CrawlStatus }>('/social/v1/bulk-export/crawl-status').then((r) => r.data);

export function CrawlPage(): VNode {
  const polled = usePolled(loadStatus, 3_000);
  const status = polled.data;
  const error = polled.error;
  const cur = status?.currentCycle;
  const last = status?.lastCompletedCycle;
  return html`<h1>Crawl</h1>
    <p class="help">One crawl serves every watchlist on this gateway: each cycle visits every account any of its users watches, stores its new tweets and refreshes recent ones. The figures below are the whole gateway's, not this account's alone.</p>
    <${LoadFailed} error=${error} retry=${polled.retry} keptFrom=${status ? polled.at : undefined} what="The crawl shown below is" />
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
                  <${Row} label="Completed" value=${`${fmtTime(last.completedAt)} (${fmtMinutes(last.durationMinutes)})`} />
                  <${Row} label="Accounts" value=${`${fmtNumber(last.accountsCompleted)} done, ${fmtNumber(last.accountsFailed)} failed, of ${fmtNumber(last.accountsTargeted)}`} />
                  <${Row} label="Tweets stored" value=${fmtNumber(last.tweetsIngested)} />
                  <${Row} label="Tweets updated" value=${fmtNumber(last.tweetsUpdated)} />
                </dl>`
              : html`<p>No cycle has completed yet.</p>`}
          </section>
          <p class="help">A cycle starts every ${status.schedule.intervalHours} hours; the next is expected ${fmtTime(status.schedule.nextExpectedAt)}.</p>`
      : null}`;
}
