// Browser test of the Overview's players chart: Debian's headless Chromium, driven by
// playwright-core, signs in as a viewer (the browser runs in Asia/Kolkata, so local times and
// UTC differ) and checks that the chart draws its y axis from zero, that a tooltip gives the
// exact value (24.33, the average of 24, 24 and 25 in one bucket) with the time in the
// viewer's zone and in UTC, and that the table beside the chart is the chart's own points
// (every five-minute bucket, in UTC, with the same figures). At 390 px nothing scrolls
// sideways and every tick label stays inside the chart; axe-core finds nothing serious. The
// "Chart times in" buttons look the same here as on Trends (which loads events.css).
//
//   BASE_URL=… LOGIN=… PASSWORD=… BUSIEST_AT=<unix seconds of the 24.33 bucket> \
//     node tests/browser/overview_chart.mjs
//
// tests/pipeline/overview_browser.rs seeds the heartbeats and runs this. CHROMIUM_BIN (default
// /usr/bin/chromium), SCREENSHOT_DIR (default <repo>/target/browser). Exits 0 when every check
// passed, 1 with the failures otherwise.

import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  clippedTickLabels, env, fail, launch, run, scanColorSchemes, signIn, waitFor, watchProblems,
} from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const LOGIN = env('LOGIN');
const PASSWORD = env('PASSWORD');
const BUSIEST_AT = Number(env('BUSIEST_AT'));
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));
const FIGURE = 'section[aria-labelledby="network-heading"] figure[data-chart]';

const log = (message) => console.log(`overview_chart: ${message}`);
const failures = [];
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
/** "2026-11-29 14:05" of unix seconds, in UTC. */
const utcStamp = (t) => new Date(t * 1000).toISOString().slice(0, 16).replace('T', ' ');

/** The drawn chart: y range, data, series label, and the table's rows. */
async function readChart(page) {
  return waitFor(page, 'the players chart drawn', (selector) => {
    const figure = document.querySelector(selector);
    if (!figure || !figure.uplot) return null;
    const u = figure.uplot;
    const cells = (tr) => [...tr.children].map((cell) => cell.textContent.trim());
    const table = figure.querySelector('[data-testid="network-table"]');
    return {
      yMin: u.scales.y.min,
      x: u.data[0],
      values: u.data[1],
      label: u.series[1].label,
      header: cells(table.querySelector('thead tr')),
      rows: [...table.querySelectorAll('tbody tr')].map(cells),
    };
  }, FIGURE);
}

/** Hovers the chart at bucket `i`; the tooltip's text. */
async function hover(page, i) {
  const point = await page.evaluate(([selector, i]) => {
    const u = document.querySelector(selector).uplot;
    const over = u.over.getBoundingClientRect();
    return { x: over.left + u.valToPos(u.data[0][i], 'x'), y: over.top + over.height / 2 };
  }, [FIGURE, i]);
  await page.mouse.move(point.x, point.y);
  return waitFor(page, 'the tooltip', () => {
    const box = document.querySelector('[data-testid="chart-tooltip"]');
    return box && box.style.display !== 'none' && box.textContent ? box.innerText : null;
  });
}

async function main() {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const browser = await launch({ bypassCSP: true, timezoneId: 'Asia/Kolkata' });
  const problems = [];
  try {
    const page = await browser.context.newPage();
    watchProblems(page, problems);
    await signIn(page, BASE_URL, LOGIN, PASSWORD, '/');
    const chart = await readChart(page);
    log(`chart: ${JSON.stringify({ ...chart, x: chart.x.length, rows: chart.rows.length, values: chart.values.filter((v) => v !== null) })}`);
    if (chart.yMin !== 0) failures.push(`the y axis starts at ${chart.yMin}, not 0`);
    if (chart.label !== 'Players online') failures.push(`the series is ${chart.label}`);
    if (chart.x.length !== 288) failures.push(`the chart has ${chart.x.length} points, not 288`);
    if (!same(chart.header, ['From (UTC)', 'Players online'])) failures.push(`the table's header reads ${JSON.stringify(chart.header)}`);
    // The table is the chart's own data: one row per point, the same figure.
    const fromChart = chart.x.map((t, i) => [utcStamp(t), chart.values[i] === null ? 'no data' : String(chart.values[i])]);
    if (!same(chart.rows, fromChart)) {
      const first = fromChart.findIndex((row, i) => !same(row, chart.rows[i]));
      failures.push(`the table is not the chart's data: row ${first} reads ${JSON.stringify(chart.rows[first])}, the chart ${JSON.stringify(fromChart[first])}`);
    }
    const busiest = chart.x.indexOf(BUSIEST_AT);
    if (busiest < 0) fail(`no point at ${BUSIEST_AT} (${utcStamp(BUSIEST_AT)})`);
    if (chart.values[busiest] !== 24.33) failures.push(`the seeded bucket draws ${chart.values[busiest]}, not 24.33`);
    const tip = await hover(page, busiest);
    log(`tooltip: ${JSON.stringify(tip)}`);
    if (!tip.includes('Players online: 24.33')) failures.push(`the tooltip reads ${JSON.stringify(tip)}, no exact value`);
    // Kolkata is UTC+05:30.
    const local = utcStamp(BUSIEST_AT + 5.5 * 3600);
    if (!tip.includes(`${local} (${utcStamp(BUSIEST_AT)} UTC)`)) failures.push(`the tooltip's times read ${JSON.stringify(tip)}, not ${local} local and ${utcStamp(BUSIEST_AT)} UTC`);
    failures.push(...await scanColorSchemes(page, 'the overview', log));
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'overview_chart.png'), fullPage: true });

    await page.setViewportSize({ width: 390, height: 844 });
    await waitFor(page, 'the chart resized to the phone', (selector) => {
      const u = document.querySelector(selector)?.uplot;
      return u && u.width <= 390 ? true : null;
    }, FIGURE);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    if (overflow > 1) failures.push(`at 390 px the overview scrolls sideways by ${overflow} px`);
    for (const label of await clippedTickLabels(page, FIGURE)) failures.push(`at 390 px ${label}`);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'overview_chart_390.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });

    // One style for the "Chart times in" buttons, whether or not a page loads events.css.
    const zoneStyles = {};
    for (const path of ['/', '/analytics/trends']) {
      await page.goto(`${BASE_URL}${path}`);
      zoneStyles[path] = await page.evaluate(() => {
        const button = document.querySelector('[data-testid="chart-zone"] button[value="utc"]');
        if (!button) return null;
        const style = getComputedStyle(button);
        return ['background-color', 'color', 'border-top-color', 'border-top-width', 'padding-top', 'font-weight']
          .map((property) => `${property}: ${style.getPropertyValue(property)}`).join('; ');
      });
    }
    log(`zone buttons: ${JSON.stringify(zoneStyles)}`);
    if (!zoneStyles['/'] || zoneStyles['/'] !== zoneStyles['/analytics/trends']) {
      failures.push(`the time-zone buttons differ: ${JSON.stringify(zoneStyles)}`);
    }
  } finally {
    await browser.close();
  }
  failures.push(...problems);
  if (failures.length) fail(failures.join('\n'));
}

run('overview_chart', 90_000, main);
