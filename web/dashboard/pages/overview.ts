// Balance, plan and rate limit, and charts of calls and credits by endpoint from /api/v1/usage/summary.
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, query, type Single } from '../api.js';
import { colorIndex, LineChart } from '../chart.js';
import { fmtNumber, fmtTime, isoLocal } from '../format.js';
import { LoadFailed, TableWrap } from '../ui.js';

export interface Account {
  id: string;
  name: string;
  planId: string;
  planName: string | null;
  rateLimitPerMinute: number;
  balance: number;
  createdAt: string;
}

interface Count {
  endpoint: string;
  calls: number;
  credits: number;
}
export interface Summary {
  from: string;
  to: string;
  granularity: 'hour' | 'day';
  calls: number;
  credits: number;
  endpoints: Count[];
  buckets: Array<{ start: string; end: string; calls: number; credits: number; endpoints: Count[] }>;
}

type Period = 'day' | 'week' | 'month';
const PERIODS: Array<{ id: Period; label: string }> = [
  { id: 'day', label: 'Last day' },
  { id: 'week', label: 'Last week' },
  { id: 'month', label: 'Last month' },
];

/** The window of a period in local time: 24 hours by hour, or 7 or 30 local days by day. */
export function windowOf(period: Period, now = new Date()): { from: string; to: string; granularity: 'hour' | 'day' } {
  if (period === 'day') {
    const to = new Date(now);
    to.setMinutes(0, 0, 0);
    to.setHours(to.getHours() + 1);
    const from = new Date(to.getTime() - 24 * 3_600_000);
    return { from: isoLocal(from), to: isoLocal(to), granularity: 'hour' };
  }
  const to = new Date(now);
  to.setHours(24, 0, 0, 0); // the next local midnight
  const from = new Date(to);
  from.setDate(from.getDate() - (period === 'week' ? 7 : 30));
  return { from: isoLocal(from), to: isoLocal(to), granularity: 'day' };
}

/**
 * Reads something once per `deps`. Only the answer for the current `deps` counts: one that arrives
 * after they changed (a slow "Last month" after "Last day" was pressed) is dropped, and until the
 * current one arrives nothing is shown as its answer.
 */
function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: unknown; busy: boolean; retry: () => void } {
  const [tick, setTick] = useState(0);
  const of = JSON.stringify(deps);
  const want = `${of}|${tick}`;
  const [got, setGot] = useState<{ key: string; of?: string; data?: T; error?: unknown }>({ key: '' });
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setGot({ key: want, of, data }),
      (error: unknown) => live && setGot({ key: want, of, error }),
    );
    return () => {
      live = false;
    };
  }, [want]);
  const busy = got.key !== want;
  // While the same thing is tried again, its failure stays (with its Try again button) until the answer.
  const error = busy && got.of !== of ? undefined : got.error;
  return { data: busy ? undefined : got.data, error, busy, retry: () => setTick((t) => t + 1) };
}

export function OverviewPage({ account, accountAt, onAccount }: { account: Account; accountAt: Date; onAccount: (a: Account) => void }): VNode {
  const [period, setPeriod] = useState<Period>('day');
  // The account is read again on arrival (the balance moves); until that succeeds the cards show the
  // one read earlier, marked as such when the read fails.
  const fresh = useLoad(() => api<Single<Account>>('/api/v1/account').then((a) => (onAccount(a.data), a.data)), []);
  const read = useLoad(() => api<Single<Summary>>(`/api/v1/usage/summary${query(windowOf(period))}`).then((s) => s.data), [period]);
  const summary = read.data;
  const error = read.error;

  const chart = useMemo(() => {
    if (!summary) return undefined;
    const xs = summary.buckets.map((b) => Date.parse(b.start) / 1000);
    const names = summary.endpoints.map((e) => e.endpoint);
    const of = (measure: 'calls' | 'credits') =>
      names.map((name) => ({ label: name, values: summary.buckets.map((b) => b.endpoints.find((e) => e.endpoint === name)?.[measure] ?? 0) }));
    return { xs, calls: of('calls'), credits: of('credits') };
  }, [summary]);

  return html`<h1>Overview</h1>
    <${LoadFailed} error=${fresh.error} busy=${fresh.busy} retry=${fresh.retry} keptFrom=${accountAt} what="The balance, plan and rate limit below are" />
    <section class="cards" aria-label="Account">
      <div class="card"><h2>Balance</h2><p class="big" data-testid="balance">${fmtNumber(account.balance)}</p><p class="help">credits</p></div>
      <div class="card"><h2>Plan</h2><p class="big" data-testid="plan">${account.planName ?? account.planId}</p><p class="help">plan id ${account.planId}</p></div>
      <div class="card"><h2>Rate limit</h2><p class="big" data-testid="rate-limit">${fmtNumber(account.rateLimitPerMinute)}</p><p class="help">requests a minute, all keys together</p></div>
    </section>
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Calls and credits by endpoint</h2>
      <div class="segmented" role="group" aria-label="Period">
        ${PERIODS.map((p) => html`<button type="button" aria-pressed=${p.id === period} onClick=${() => setPeriod(p.id)}>${p.label}</button>`)}
      </div>
      <${LoadFailed} error=${error} busy=${read.busy} retry=${read.retry} />
      ${!summary && !error ? html`<p role="status">Loading usage…</p>` : null}
      ${summary && chart
        ? html`<p class="help" role="status">${fmtNumber(summary.calls)} charged calls, ${fmtNumber(summary.credits)} credits, from ${fmtTime(summary.from)} up to ${fmtTime(summary.to)} (by ${summary.granularity}; free calls are not counted).</p>
            ${summary.endpoints.length === 0
              ? html`<p class="empty">No charged calls in this period.</p>`
              : html`<div class="charts" data-testid="charts">
                  <${LineChart} title="Calls" unit="calls" xs=${chart.xs} series=${chart.calls} hourly=${summary.granularity === 'hour'} />
                  <${LineChart} title="Credits" unit="credits" xs=${chart.xs} series=${chart.credits} hourly=${summary.granularity === 'hour'} />
                </div>`}
            <${TableWrap} label="Totals by endpoint">
              <table data-testid="endpoint-totals">
                <caption>Totals by endpoint</caption>
                <thead><tr><th scope="col">Endpoint</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Credits</th></tr></thead>
                <tbody>
                  ${summary.endpoints.map(
                    (e) => html`<tr><th scope="row"><span class="swatch" data-color=${colorIndex(e.endpoint)}></span>${e.endpoint}</th><td class="num">${fmtNumber(e.calls)}</td><td class="num">${fmtNumber(e.credits)}</td></tr>`,
                  )}
                  <tr class="total"><th scope="row">All</th><td class="num">${fmtNumber(summary.calls)}</td><td class="num">${fmtNumber(summary.credits)}</td></tr>
                </tbody>
              </table>
            <//>`
        : null}
    </section>`;
}
