// Browser test of the Trends page (/analytics/trends): Debian's headless Chromium, driven by
// playwright-core, signs in as a viewer, asks for quest_completed per day over 2026-10-05 to
// 10-08 with the previous period, and checks the table (bucket edges in UTC, the previous
// period beside each day, the totals), the chart's data (the previous period dashed) and that
// uPlot drew it; then unique players, and a breakdown by the `map` property with its "other".
// axe-core finds nothing serious in either colour scheme, and nothing scrolls sideways on a
// narrow screen.
//
//   BASE_URL=… LOGIN=… PASSWORD=… node tests/browser/trends_page.mjs
//
// tests/pipeline/trends_page.rs seeds the events (see tests/pipeline/trends.rs `seed` for the
// hand count). CHROMIUM_BIN (default /usr/bin/chromium), SCREENSHOT_DIR (default
// <repo>/target/browser). Exits 0 when every check passed, 1 with the failures otherwise.

import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  accessibilityProblems, env, fail, launch, run, signIn, waitFor, watchProblems,
} from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const LOGIN = env('LOGIN');
const PASSWORD = env('PASSWORD');
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));

const log = (message) => console.log(`trends_page: ${message}`);
const failures = [];
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

async function scan(page, label) {
  for (const colorScheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme });
    const found = await accessibilityProblems(page);
    for (const problem of found) failures.push(`axe on ${label} (${colorScheme}): ${problem}`);
    log(`axe on ${label} (${colorScheme}): ${found.length} serious or critical`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

async function checkNarrow(page, what) {
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 1) failures.push(`at 390 px wide ${what} scrolls sideways by ${overflow} px`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** Marks what the page shows now as stale, then submits the form (a GET: a new page, or an
 * htmx swap of one), so the next read waits for the new result. */
async function submit(page) {
  await page.evaluate(() => {
    for (const id of ['trends-result', 'trends-error']) document.getElementById(id)?.setAttribute('data-stale', '1');
  });
  await page.getByRole('button', { name: 'Show', exact: true }).click();
}

/** Submits the form and reads the result: table header, rows, totals, chart data, canvas. */
async function show(page) {
  await submit(page);
  return waitFor(page, 'the trend shows its result (or an error)', () => {
    if (document.querySelector('[data-stale]')) return null;
    const error = document.getElementById('trends-error');
    if (error) return { error: error.textContent };
    const table = document.querySelector('[data-testid="trends-table"]');
    const figure = document.querySelector('#trends-result figure[data-chart]');
    // Wait for uPlot too: charts.js draws on DOMContentLoaded.
    if (!table || !figure || !figure.querySelector('.chart-canvas canvas')) return null;
    const cells = (tr) => [...tr.children].map((cell) => cell.textContent.trim());
    const chart = JSON.parse(figure.dataset.chart);
    return {
      header: cells(table.querySelector('thead tr')),
      rows: [...table.querySelectorAll('tbody tr')].map(cells),
      totals: table.querySelector('tfoot tr') ? cells(table.querySelector('tfoot tr')) : null,
      chart: chart.series.map((s) => ({ label: s.label, values: s.values, dash: s.dash })),
      x: chart.x,
    };
  });
}

async function main() {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const browser = await launch({ bypassCSP: true });
  const problems = [];
  try {
    const page = await browser.context.newPage();
    // The range error answers 422 on purpose.
    const refused = (r) => r.status() === 422 && new URL(r.url()).pathname === '/analytics/trends';
    watchProblems(page, problems, { allowStatus: refused });
    await signIn(page, BASE_URL, LOGIN, PASSWORD, '/analytics/trends');
    await scan(page, 'the empty form');
    await page.getByLabel(/^Event name/).fill('quest_completed');
    await page.getByLabel(/^From \(UTC\)/).fill('2026-10-05T00:00:00');
    await page.getByLabel(/^To \(UTC\)/).fill('2026-10-08T00:00:00');
    await page.getByLabel('Compare with the previous period').check();

    const totals = await show(page);
    if (totals.error) fail(`the trend returned an error: ${totals.error}`);
    log(`totals: ${JSON.stringify(totals)}`);
    if (!same(totals.header, ['Bucket (UTC)', 'quest_completed', 'quest_completed (previous period)'])) {
      failures.push(`header reads ${JSON.stringify(totals.header)}`);
    }
    // 10-05: 00:00:00Z and 12:00+02:00; 10-06: 23:30-01:00 on 10-05; 10-07: two. Before: 10-02, 10-04.
    const expectedRows = [['2026-10-05 00:00', '2', '1'], ['2026-10-06 00:00', '1', '0'], ['2026-10-07 00:00', '2', '1']];
    if (!same(totals.rows, expectedRows)) failures.push(`rows read ${JSON.stringify(totals.rows)}`);
    if (!same(totals.totals, ['Whole period', '5', '2'])) failures.push(`totals read ${JSON.stringify(totals.totals)}`);
    const day = Date.UTC(2026, 9, 5) / 1000;
    if (!same(totals.x, [day, day + 86400, day + 2 * 86400])) failures.push(`chart x is ${totals.x}`);
    const expectedChart = [
      { label: 'quest_completed', values: [2, 1, 2], dash: false },
      { label: 'quest_completed (previous period)', values: [1, 0, 1], dash: true },
    ];
    if (!same(totals.chart, expectedChart)) failures.push(`chart data is ${JSON.stringify(totals.chart)}`);
    await scan(page, 'the totals');
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'trends_totals.png'), fullPage: true });
    await checkNarrow(page, 'the totals');

    // Unique players: P1 twice on 10-05 counts once.
    await page.getByLabel('Measure', { exact: true }).selectOption('unique');
    const unique = await show(page);
    if (unique.error) fail(`the unique trend returned an error: ${unique.error}`);
    const expectedUnique = [['2026-10-05 00:00', '1', '1'], ['2026-10-06 00:00', '1', '0'], ['2026-10-07 00:00', '2', '1']];
    if (!same(unique.rows, expectedUnique)) failures.push(`unique rows read ${JSON.stringify(unique.rows)}`);
    // Distinct players over a period are not the sum of its days: no "Whole period" row.
    if (unique.totals !== null) failures.push(`unique totals read ${JSON.stringify(unique.totals)}`);

    // By the map property, this period only: a and b, then "other" (no map).
    await page.getByLabel('Measure', { exact: true }).selectOption('total');
    await page.getByLabel('Compare with the previous period').uncheck();
    await page.getByLabel('Break down by', { exact: true }).selectOption('property');
    await page.getByLabel(/^Property/).fill('map');
    const byMap = await show(page);
    if (byMap.error) fail(`the breakdown returned an error: ${byMap.error}`);
    log(`by map: ${JSON.stringify(byMap)}`);
    if (!same(byMap.header, ['Bucket (UTC)', 'a', 'b', 'other'])) failures.push(`breakdown header reads ${JSON.stringify(byMap.header)}`);
    const expectedMap = [['2026-10-05 00:00', '2', '0', '0'], ['2026-10-06 00:00', '0', '1', '0'], ['2026-10-07 00:00', '0', '1', '1']];
    if (!same(byMap.rows, expectedMap)) failures.push(`breakdown rows read ${JSON.stringify(byMap.rows)}`);
    await scan(page, 'the breakdown');
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'trends_breakdown.png'), fullPage: true });

    // A range too long for hour buckets is the page's own error, not a failure.
    await page.getByLabel('Per', { exact: true }).selectOption('hour');
    await page.getByLabel(/^From \(UTC\)/).fill('2026-08-01T00:00:00');
    await submit(page);
    const error = await waitFor(page, 'the range error', () => {
      if (document.querySelector('[data-stale]')) return null;
      return document.getElementById('trends-error')?.textContent;
    });
    if (!/at most 744 hour buckets/.test(error)) failures.push(`the range error reads ${error}`);
    await scan(page, 'the range error');
  } finally {
    await browser.close();
  }
  // htmx logs every error answer it swaps in; the range error's 422 page is one by design.
  failures.push(...problems.filter((p) => !p.includes('Response Status Error Code 422 from /analytics/trends')));
  if (failures.length) fail(failures.join('\n'));
}

run('trends_page', 120_000, main);
