// A uPlot line chart of one measure (calls or credits) per endpoint over the summary's buckets, with a
// legend of toggle buttons (uPlot's own legend is rows to click: no keyboard, no pressed state).
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';

// Distinct on white and dark enough for lines and legend text (each at least 4.5:1 against white).
export const PALETTE = ['#1f5fa8', '#b3261e', '#1b6e3a', '#7a3fa0', '#8a5a00', '#00697a', '#a0316b', '#4a4a4a'];

// An endpoint keeps its colour from one view to the next (by its name, not its rank), the
// gateway's charged operations each their own.
const KNOWN = ['getTweet', 'getUserByUsername', 'getUserTweets', 'getRetweeters', 'getCommunity', 'getWalletBalance'];
export function colorIndex(endpoint: string): number {
  const known = KNOWN.indexOf(endpoint);
  if (known >= 0) return known;
  let h = 0;
  for (let i = 0; i < endpoint.length; i++) h = (h * 31 + endpoint.charCodeAt(i)) >>> 0;
  return h % PALETTE.length;
}

const WHOLE_STEPS = [1, 2, 5].flatMap((m) => [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000].map((p) => m * p)).sort((a, b) => a - b);

export interface Series {
  label: string;
  values: number[];
}

export function LineChart({ title, xs, series, unit, hourly }: { title: string; xs: number[]; series: Series[]; unit: string; hourly: boolean }): VNode {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot>();
  // The lines turned off in the legend, by endpoint: kept when the chart is drawn again.
  const [hidden, setHidden] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = () => Math.max(280, el.clientWidth);
    const opts: uPlot.Options = {
      title,
      width: width(),
      height: 260,
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      // Calls and credits are whole numbers: no tick at 0.5.
      axes: [{ values: hourly ? '{HH}:{mm}' : '{MMM} {D}' }, { label: unit, size: 60, incrs: WHOLE_STEPS }],
      legend: { show: false },
      series: [
        { label: hourly ? 'Hour' : 'Day', value: (_u, v) => (v == null ? '—' : new Date(v * 1000).toLocaleString()) },
        ...series.map((s) => ({ label: s.label, show: !hidden.has(s.label), stroke: PALETTE[colorIndex(s.label)], width: 2, points: { show: true, size: 5 } })),
      ],
    };
    const u = new uPlot(opts, [xs, ...series.map((s) => s.values)], el);
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: width(), height: 260 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.current = undefined;
      u.destroy();
    };
  }, [title, xs, series, unit, hourly]);
  const toggle = (i: number, label: string) => {
    const next = new Set(hidden);
    if (!next.delete(label)) next.add(label);
    setHidden(next);
    plot.current?.setSeries(i + 1, { show: !next.has(label) });
  };
  const total = series.reduce((n, s) => n + s.values.reduce((a, b) => a + b, 0), 0);
  // The canvas says nothing to a screen reader: the table under the charts holds the same numbers.
  return html`<figure class="chart">
    <div ref=${box} class="chart-box" role="img" aria-label=${`${title}: ${total} ${unit} in all, by endpoint; the numbers are in the table below`}></div>
    <div class="legend" role="group" aria-label=${`${title}: lines shown`}>
      ${series.map(
        (s, i) => html`<button type="button" aria-pressed=${!hidden.has(s.label)} onClick=${() => toggle(i, s.label)}><span class="swatch" data-color=${colorIndex(s.label)}></span>${s.label}</button>`,
      )}
    </div>
  </figure>`;
}
