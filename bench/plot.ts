// Draws benchmark curves as PNG files: uPlot (the dashboard's charting library) in Debian's
// Chromium, driven by playwright-core, on log-log axes. Nothing is fetched from the network.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';
import type { Point } from './growth.js';

export interface Chart {
  path: string;
  title: string;
  x: string;
  series: Array<{ label: string; points: Point[] }>;
}

const require = createRequire(import.meta.url);
const COLORS = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df'];

export async function drawCharts(charts: Chart[], executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'): Promise<void> {
  const uplotJs = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
  const uplotCss = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');
  const browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 820, height: 460 }, deviceScaleFactor: 1 });
    for (const c of charts) {
      const xs = [...new Set(c.series.flatMap((s) => s.points.map((p) => p.x)))].sort((a, b) => a - b);
      const data = [xs, ...c.series.map((s) => xs.map((x) => s.points.find((p) => p.x === x)?.y ?? null))];
      await page.setContent(`<!doctype html><html><head><style>${uplotCss} body{font:14px sans-serif;margin:10px;background:#fff}</style></head><body><div id="c"></div></body></html>`);
      await page.addScriptTag({ content: uplotJs });
      // Runs in the page (a string: this file is compiled without the DOM's types).
      const opts = {
        title: c.title,
        width: 800,
        height: 420,
        legend: { live: false },
        scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
        axes: [{ label: c.x }, { label: 'value (log scale)' }],
        series: [{ label: c.x }, ...c.series.map((s, i) => ({ label: s.label, stroke: COLORS[i % COLORS.length], width: 2, points: { size: 7 } }))],
      };
      await page.evaluate(`new uPlot(${JSON.stringify(opts)}, ${JSON.stringify(data)}, document.getElementById('c'))`);
      await page.locator('#c').screenshot({ path: c.path });
    }
  } finally {
    await browser.close();
  }
}
