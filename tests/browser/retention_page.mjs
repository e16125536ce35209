// Browser test of the Retention page: Debian's headless Chromium, driven by playwright-core,
// signs in as a moderator on a stack fed through ingest (tests/pipeline/retention.rs `seed`: the
// sessions of players A, B, C, E in the week of Monday 2025-03-03, explicit past times) and
// checks the cohort table's figures and heat classes (by day and by week), the curves drawn by
// uPlot, opening the week's cohort (its four players, each linking to their page), a bad form
// (422 with a message, the form still there), and axe-core in light and dark schemes. Then a
// viewer (analytics is for viewers and up): the same page, the cohort's players without links
// (player pages are for moderators and up).
//
//   BASE_URL=… MODERATOR_LOGIN=… VIEWER_LOGIN=… PASSWORD=… WEEK_PLAYERS=<uuid,uuid,…> node tests/browser/retention_page.mjs
//
// tests/pipeline/retention_page.rs seeds the log and runs this. CHROMIUM_BIN (default
// /usr/bin/chromium), SCREENSHOT_DIR (default <repo>/target/browser). Exits 0 when every check
// passed, 1 with the failures otherwise.

import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  accessibilityProblems, env, fail, launch, run, signIn, waitFor, watchProblems,
} from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const MODERATOR_LOGIN = env('MODERATOR_LOGIN');
const VIEWER_LOGIN = env('VIEWER_LOGIN');
const PASSWORD = env('PASSWORD');
const WEEK_PLAYERS = env('WEEK_PLAYERS').split(',').sort();
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));
const PATH = '/analytics/retention';

const log = (message) => console.log(`retention_page: ${message}`);
const failures = [];

/** The table: per row its cohort, size and cells (text and heat class). */
const table = (page) => page.$$eval('[data-testid="cohort-row"]', (trs) => trs.map((tr) => ({
  cohort: tr.dataset.cohort,
  label: tr.querySelector('th').textContent.trim(),
  size: tr.querySelector('[data-testid="cohort-size"]').textContent.trim(),
  link: tr.querySelector('th a')?.getAttribute('href') ?? null,
  cells: [...tr.querySelectorAll('[data-testid="retention-cell"]')].map((td) => ({
    text: td.textContent.replace(/\s+/g, ' ').trim(),
    heat: [...td.classList].find((c) => /^heat-\d$/.test(c)),
  })),
})));

function expect(label, actual, expected) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) failures.push(`${label}: got ${a}, expected ${e}`);
  else log(`${label}: ok`);
}

async function scan(page, label) {
  for (const colorScheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme });
    const found = await accessibilityProblems(page);
    for (const problem of found) failures.push(`axe on ${label} (${colorScheme}): ${problem}`);
    log(`axe on ${label} (${colorScheme}): ${found.length} serious or critical`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

async function checkDays(page) {
  await signIn(page, BASE_URL, MODERATOR_LOGIN, PASSWORD, PATH);
  const links = await page.$$eval('nav[aria-label="Dashboard"] a', (as) => as.map((a) => a.getAttribute('href')));
  if (!links.includes(PATH)) failures.push(`a moderator's bar lacks ${PATH}: ${links.join(' ')}`);
  // The form, filled as a person would: by day, 2025-03-03 to 03-09, days 1 and 7.
  await page.getByLabel('Cohorts by').selectOption('day');
  await page.locator('#retention-from').fill('2025-03-03');
  await page.locator('#retention-to').fill('2025-03-09');
  await page.locator('#retention-days').fill('1, 7');
  await Promise.all([
    page.waitForURL((url) => url.searchParams.get('from') === '2025-03-03'),
    page.getByRole('button', { name: 'Show' }).click(),
  ]);
  const rows = await table(page);
  const shown = rows.filter((r) => r.size !== '0').map((r) => [r.cohort, r.size, ...r.cells.map((c) => `${c.text} ${c.heat}`)]);
  expect('daily cohorts', shown, [
    ['2025-03-03', '1', '100% (1) heat-5', '100% (1) heat-5'],
    ['2025-03-04', '1', '100% (1) heat-5', '0% (0) heat-0'],
    ['2025-03-05', '1', '0% (0) heat-0', '0% (0) heat-0'],
    ['2025-03-09', '1', '100% (1) heat-5', '0% (0) heat-0'],
  ]);
  expect('every day of the range has a row', rows.map((r) => r.cohort).length, 7);
  const headers = await page.$$eval('#retention-table thead th', (ths) => ths.map((th) => th.textContent.trim()));
  expect('columns', headers, ['Cohort', 'Players', 'Day 1', 'Day 7']);
  // The curves: uPlot drew a canvas for the figure (the table says the same in words).
  await waitFor(page, 'the curves drawn', () => document.querySelector('#retention-curves canvas') !== null);
  await scan(page, `${PATH} (days)`);
}

async function checkWeek(page) {
  // On or after, by week: a Wednesday `from` snaps back to Monday 03-03.
  await page.goto(`${BASE_URL}${PATH}?period=week&from=2025-03-05&to=2025-03-09&days=1%2C7&mode=on`);
  const rows = await table(page);
  expect('the week of 03-03', rows.map((r) => [r.label, r.size, ...r.cells.map((c) => `${c.text} ${c.heat}`)]), [
    ['Week of 2025-03-03', '4', '75% (3) heat-5', '25% (1) heat-3'],
  ]);
  const link = rows[0]?.link;
  if (!link) {
    failures.push('the week cohort has no link to its players');
    return;
  }
  await Promise.all([
    page.waitForURL((url) => url.searchParams.get('cohort') === '2025-03-03'),
    page.getByRole('link', { name: 'Week of 2025-03-03' }).click(),
  ]);
  const players = await page.$$eval('[data-testid="cohort-player"] a', (as) => as.map((a) => a.getAttribute('href')));
  expect('the cohort opened to its players', [...players].sort(), WEEK_PLAYERS.map((uuid) => `/players/${uuid}`));
  const heading = await page.locator('#cohort-players-title').textContent();
  expect('the opened cohort heading', heading.trim(), 'Players of Week of 2025-03-03');
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'retention.png'), fullPage: true });
  await scan(page, `${PATH} (a cohort opened)`);
  // A player's link opens their page.
  const first = page.locator('[data-testid="cohort-player"] a').first();
  const href = await first.getAttribute('href');
  const response = await Promise.all([page.waitForURL((url) => url.pathname === href), first.click()]).then(() => page.reload());
  if (response?.status() !== 200) failures.push(`${href} answered ${response?.status()}`);
}

async function checkBadForm(page) {
  const response = await page.goto(`${BASE_URL}${PATH}?days=one&from=2025-13-01`);
  const message = await page.locator('#retention-error').textContent().catch(() => '');
  if (response.status() !== 422 || !message.includes('Days:') || !message.includes('From:')) {
    failures.push(`a bad form answered ${response.status()}: ${message.trim()}`);
  } else {
    log('bad form: 422 with a message per field');
  }
  if (await page.getByRole('button', { name: 'Show' }).count() !== 1) failures.push('the form is gone on the error page');
  await scan(page, `${PATH} (bad form)`);
}

async function checkViewer(page) {
  await page.goto(`${BASE_URL}/`);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL((url) => url.pathname === '/login', { timeout: 15_000 });
  const cohort = `${PATH}?period=week&from=2025-03-03&to=2025-03-09&days=1%2C7&cohort=2025-03-03`;
  await signIn(page, BASE_URL, VIEWER_LOGIN, PASSWORD, cohort);
  const links = await page.$$eval('nav[aria-label="Dashboard"] a', (as) => as.map((a) => a.getAttribute('href')));
  if (!links.includes(PATH)) failures.push(`a viewer's bar lacks ${PATH}: ${links.join(' ')}`);
  const listed = await page.$$eval('[data-testid="cohort-player"]', (lis) => lis.map((li) => ({
    uuid: li.dataset.uuid, linked: li.querySelector('a') !== null,
  })));
  expect("a viewer's cohort list: the players, unlinked",
    listed.map((p) => `${p.uuid} ${p.linked}`).sort(), WEEK_PLAYERS.map((uuid) => `${uuid} false`));
  await scan(page, `${PATH} (viewer)`);
}

async function main() {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const browser = await launch({ bypassCSP: true });
  try {
    const { context } = browser;
    const page = context.pages()[0] ?? await context.newPage();
    const problems = [];
    // The bad form's 422 is expected.
    watchProblems(page, problems, { allowStatus: (r) => r.status() === 422 });
    await checkDays(page);
    await checkWeek(page);
    await checkBadForm(page);
    await checkViewer(page);
    failures.push(...problems);
    if (failures.length > 0) fail(`\n  - ${failures.join('\n  - ')}`);
  } finally {
    await browser.close();
  }
}

run('retention_page', 180_000, main);
