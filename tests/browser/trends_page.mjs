// Browser test of the Trends page (/analytics/trends): Debian's headless Chromium, driven by
// playwright-core, signs in as a viewer, asks for quest_completed per day over 2026-10-05 to
// 10-08 with the previous period, and checks the table (bucket edges in UTC, the previous
// period beside each day, the totals), the chart's data (the previous period dashed) and that
// uPlot drew it; then unique players, and a breakdown by the `map` property with its "other".
// axe-core finds nothing serious in either colour scheme, and nothing scrolls sideways on a
// narrow screen.
//
// First the page as it opens, with no question: joins per day over the last 30 days, drawn
// with the y axis from zero, a tooltip with the exact value on hover (the browser runs in
// Asia/Kolkata, so local times and UTC differ), the table's numbers equal to the chart's, and
// the "Chart times in" setting switching the time axis between the viewer's zone and UTC; at
// 390 px every tick label stays inside the chart.
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
  accessibilityProblems, clippedTickLabels, env, fail, launch, run, signIn, waitFor, watchProblems,
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

/** Marks the result stale, so the next read waits for the page that answers a form. */
async function markStale(page) {
  await page.evaluate(() => document.getElementById('trends-result').setAttribute('data-stale', '1'));
}

/** The drawn default chart: its axis label, zone, y range, data and the table's rows. */
async function readChart(page) {
  return waitFor(page, 'the default answer drawn', () => {
    if (document.querySelector('[data-stale]')) return null;
    const figure = document.querySelector('#trends-result figure[data-chart]');
    if (!document.getElementById('trends-default') || !figure || !figure.uplot) return null;
    const u = figure.uplot;
    const table = figure.querySelector('[data-testid="trends-table"]');
    const cells = (tr) => [...tr.children].map((cell) => cell.textContent.trim());
    return {
      zone: figure.dataset.timeZone,
      xLabel: u.axes[0].label,
      yMin: u.scales.y.min,
      x: u.data[0],
      values: u.data[1],
      label: u.series[1].label,
      rows: [...table.querySelectorAll('tbody tr')].map(cells),
    };
  });
}

/** Hovers the chart at bucket `i`; the tooltip's text. */
async function hover(page, i) {
  const point = await page.evaluate((i) => {
    const u = document.querySelector('#trends-result figure[data-chart]').uplot;
    const over = u.over.getBoundingClientRect();
    return { x: over.left + u.valToPos(u.data[0][i], 'x'), y: over.top + over.height / 2 };
  }, i);
  await page.mouse.move(point.x, point.y);
  return waitFor(page, 'the tooltip', () => {
    const box = document.querySelector('[data-testid="chart-tooltip"]');
    return box && box.style.display !== 'none' && box.textContent ? box.innerText : null;
  });
}

async function checkDefaultChart(page) {
  const chart = await readChart(page);
  log(`default chart: ${JSON.stringify({ ...chart, rows: chart.rows.length })}`);
  if (chart.yMin !== 0) failures.push(`the y axis starts at ${chart.yMin}, not 0`);
  if (chart.label !== 'joins') failures.push(`the default series is ${chart.label}`);
  if (chart.x.length < 30) failures.push(`the default answer has ${chart.x.length} days`);
  // The table says what the chart draws, bucket by bucket (the table in UTC).
  const utcDay = (t) => new Date(t * 1000).toISOString().slice(0, 16).replace('T', ' ');
  const fromChart = chart.x.map((t, i) => [utcDay(t), String(chart.values[i])]);
  if (!same(chart.rows, fromChart)) failures.push(`table ${JSON.stringify(chart.rows)} is not the chart's ${JSON.stringify(fromChart)}`);
  const busiest = chart.values.indexOf(Math.max(...chart.values));
  if (chart.values[busiest] !== 2) failures.push(`the seeded joins are not drawn: ${JSON.stringify(chart.values)}`);
  // Local by default: Kolkata is UTC+05:30, so a UTC midnight bucket is 05:30 local.
  // Chromium names the zone by its older name, Asia/Calcutta.
  const kolkata = /^Asia\/(Kolkata|Calcutta)$/;
  if (!kolkata.test(chart.zone) || chart.xLabel !== `Time (${chart.zone})`) {
    failures.push(`local time axis reads ${chart.xLabel} (${chart.zone})`);
  }
  const tip = await hover(page, busiest);
  log(`tooltip: ${JSON.stringify(tip)}`);
  const day = utcDay(chart.x[busiest]).slice(0, 10);
  if (!tip.includes('joins: 2')) failures.push(`the tooltip reads ${JSON.stringify(tip)}, no exact value`);
  if (!tip.includes(`${day} 05:30`) || !tip.includes(`(${day} 00:00 UTC)`)) {
    failures.push(`the tooltip's times read ${JSON.stringify(tip)}`);
  }
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'trends_default.png'), fullPage: true });

  // On a phone every tick label stays inside the chart (the last date is not cut off).
  await page.setViewportSize({ width: 390, height: 844 });
  await waitFor(page, 'the chart resized to the phone', () => {
    const u = document.querySelector('#trends-result figure[data-chart]')?.uplot;
    return u && u.width <= 390 ? true : null;
  });
  for (const label of await clippedTickLabels(page, '#trends-result figure[data-chart]')) {
    failures.push(`at 390 px ${label}`);
  }
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'trends_default_390.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });

  // The setting: UTC, then back to the viewer's zone (a plain form post; the page comes back).
  await markStale(page);
  await page.getByRole('button', { name: 'UTC', exact: true }).click();
  const utc = await readChart(page);
  if (utc.zone !== 'UTC' || utc.xLabel !== 'Time (UTC)') failures.push(`after choosing UTC the axis reads ${utc.xLabel} (${utc.zone})`);
  const utcTip = await hover(page, busiest);
  if (!utcTip.includes(`${day} 00:00 UTC`)) failures.push(`the UTC tooltip reads ${JSON.stringify(utcTip)}`);
  await markStale(page);
  await page.getByRole('button', { name: 'my time zone', exact: true }).click();
  const local = await readChart(page);
  if (!kolkata.test(local.zone)) failures.push(`back to local the axis reads ${local.xLabel} (${local.zone})`);
}

async function main() {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const browser = await launch({ bypassCSP: true, timezoneId: 'Asia/Kolkata' });
  const problems = [];
  try {
    const page = await browser.context.newPage();
    // The range error answers 422 on purpose.
    const refused = (r) => r.status() === 422 && new URL(r.url()).pathname === '/analytics/trends';
    watchProblems(page, problems, { allowStatus: refused });
    await signIn(page, BASE_URL, LOGIN, PASSWORD, '/analytics/trends');
    await checkDefaultChart(page);
    await scan(page, 'the default answer');
    await page.getByLabel('Count', { exact: true }).selectOption('event');
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
