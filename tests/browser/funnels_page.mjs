// Browser test of the Funnels page's deeper results: Debian's headless Chromium, driven by
// playwright-core, signs in as a moderator, runs quest_started → quest_completed with a
// breakdown by `region`, and checks the page shows time to convert (median and buckets), the
// breakdown (with its "(none)" row) and the players who dropped off after step 1 as links to
// their pages (the first link opens); axe-core finds nothing serious in
// either colour scheme, and nothing scrolls sideways on a narrow screen.
//
//   BASE_URL=… LOGIN=… PASSWORD=… CONVERTED=<uuid> DROPPED=<uuid>,<uuid> \
//     node tests/browser/funnels_page.mjs
//
// tests/pipeline/funnels_page.rs seeds the events and runs this: CONVERTED (region eu) did
// both steps; DROPPED (in id order: one with region us, one without) only the first.
// CHROMIUM_BIN (default /usr/bin/chromium), SCREENSHOT_DIR (default <repo>/target/browser).
// Exits 0 when every check passed, 1 with the failures otherwise.

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
const CONVERTED = env('CONVERTED');
const DROPPED = env('DROPPED').split(',');
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));

const log = (message) => console.log(`funnels_page: ${message}`);
const failures = [];

async function scan(page, label) {
  for (const colorScheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme });
    const found = await accessibilityProblems(page);
    for (const problem of found) failures.push(`axe on ${label} (${colorScheme}): ${problem}`);
    log(`axe on ${label} (${colorScheme}): ${found.length} serious or critical`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Every control of the form's options stays inside its own field (the window's unit once
 * ran under the Order field beside it). */
async function checkFieldsFit(page, what) {
  const spills = await page.evaluate(() => [...document.querySelectorAll('.funnel-options .field')]
    .flatMap((field) => {
      const box = field.getBoundingClientRect();
      return [...field.querySelectorAll('input, select, button')]
        .filter((control) => {
          const r = control.getBoundingClientRect();
          return r.left < box.left - 0.5 || r.right > box.right + 0.5;
        })
        .map((control) => `${control.name || control.id} runs past its field`);
    }));
  for (const spill of spills) failures.push(`${what}: ${spill}`);
}

async function checkNarrow(page, what) {
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 1) failures.push(`at 390 px wide ${what} scrolls sideways by ${overflow} px`);
  await checkFieldsFit(page, `at 390 px ${what}`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** The drop-off list's links, in order. */
const droppedLinks = (page) => page.$$eval('[data-testid="dropped-player"]', (as) => as.map((a) => a.getAttribute('href')));

async function main() {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // axe-core is added as a script tag, which the page's CSP would refuse.
  const browser = await launch({ bypassCSP: true });
  const problems = [];
  try {
    const page = await browser.context.newPage();
    watchProblems(page, problems);
    await signIn(page, BASE_URL, LOGIN, PASSWORD, '/funnels?step=quest_started');
    await checkFieldsFit(page, 'at 1280 px the form');
    await page.getByLabel('Step 2', { exact: true }).fill('quest_completed');
    await page.getByLabel(/Breakdown by property of step 1/).fill('region');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const result = await waitFor(page, 'the funnel shows its result (or an error)', () => {
      const error = document.getElementById('funnel-error');
      if (error) return { error: error.textContent };
      if (!document.getElementById('funnel-time-to-convert')) return null;
      const cells = (tr) => [...tr.children].map((cell) => cell.textContent.trim());
      return {
        bars: [...document.querySelectorAll('[data-testid="funnel-bar"]')].map((bar) => Number(bar.dataset.players)),
        header: cells(document.querySelector('#funnel-time-to-convert thead tr')),
        times: [...document.querySelectorAll('[data-testid="time-row"]')].map(cells),
        breakdown: [...document.querySelectorAll('[data-testid="breakdown-row"]')].map(cells),
        summary: document.getElementById('funnel-dropped-summary')?.textContent.trim(),
      };
    });
    if (result.error) fail(`the funnel returned an error: ${result.error}`);
    log(`result: ${JSON.stringify(result)}`);
    if (JSON.stringify(result.bars) !== '[3,1]') failures.push(`bars show ${result.bars}, expected 3 then 1`);
    // One row for step 2: the one player converted within seconds, so "<1m" holds 1.
    const expectedHeader = ['Step', 'Median from step 1', '<1m', '1m-10m', '10m-1h', '1h-1d', '1d-7d', '>=7d'];
    if (JSON.stringify(result.header) !== JSON.stringify(expectedHeader)) failures.push(`time to convert header: ${result.header}`);
    const [row] = result.times;
    if (result.times.length !== 1 || row[0] !== '2. quest_completed' || row[2] !== '1'
      || row.slice(3).some((cell) => cell !== '0') || !/s$/.test(row[1])) {
      failures.push(`time to convert reads ${JSON.stringify(result.times)}`);
    }
    // eu converted, us did not, and the entry without a region has its own row.
    const expectedBreakdown = [['eu', '1', '1', '100%'], ['us', '1', '0', '0%'], ['(none)', '1', '0', '0%']];
    if (JSON.stringify(result.breakdown) !== JSON.stringify(expectedBreakdown)) {
      failures.push(`breakdown reads ${JSON.stringify(result.breakdown)}`);
    }
    if (result.summary !== '2 players reached quest_started but not quest_completed.') {
      failures.push(`drop-off summary reads ${result.summary}`);
    }
    const links = await droppedLinks(page);
    if (JSON.stringify(links) !== JSON.stringify(DROPPED.map((id) => `/players/${id}`))) {
      failures.push(`drop-off links are ${JSON.stringify(links)}, expected ${DROPPED}`);
    }
    if (links.includes(`/players/${CONVERTED}`)) failures.push('the converted player is listed as dropped off');
    await scan(page, 'the funnel result');
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'funnels_deeper.png'), fullPage: true });
    await checkNarrow(page, 'the funnel result');

    // The link opens the player's page.
    const [response] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === `/players/${DROPPED[0]}`),
      page.locator('[data-testid="dropped-player"]').first().click(),
    ]);
    log(`the first dropped-off player's link answered ${response.status()}`);
    if (response.status() !== 200) failures.push(`/players/${DROPPED[0]} answered ${response.status()}`);
  } finally {
    await browser.close();
  }
  failures.push(...problems);
  if (failures.length) fail(failures.join('\n'));
}

run('funnels_page', 120_000, main);
