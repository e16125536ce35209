// Browser test of erasing a player from the dashboard: Debian's headless Chromium,
// driven by playwright-core, signs in as an owner, opens a player's page, downloads the
// player's export with the "Export this player's data" link (JSON holding their name and
// chat), follows "Erase this player's personal data" to the confirm page (axe-core finds
// nothing serious), is stopped without the checkbox (by the browser, and by the server with a
// message when the browser's check is taken away), then erases: the player page shows
// "erased player" and the old name and chat are nowhere on it, nor on the chat log, nor in a
// new export, while the other player keeps theirs. Then a moderator: no erase link, 403 on the
// confirm page and on the form's POST.
//
//   BASE_URL=… OWNER_LOGIN=… MODERATOR_LOGIN=… PASSWORD=… ERASED=… ERASED_NAME=… \
//     ERASED_CHAT=… KEPT=… KEPT_NAME=… KEPT_CHAT=… node tests/browser/erase_page.mjs
//
// tests/pipeline/privacy_pages.rs seeds the players and runs this. CHROMIUM_BIN (default
// /usr/bin/chromium), SCREENSHOT_DIR (default <repo>/target/browser). Exits 0 when every check
// passed, 1 with the failures otherwise.

import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  WAIT_MS, env, fail, launch, refusalProblem, run, scanColorSchemes, signIn, signOut, watchProblems,
} from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const OWNER_LOGIN = env('OWNER_LOGIN');
const MODERATOR_LOGIN = env('MODERATOR_LOGIN');
const PASSWORD = env('PASSWORD');
const ERASED = env('ERASED');
const ERASED_NAME = env('ERASED_NAME');
const ERASED_CHAT = env('ERASED_CHAT');
const KEPT = env('KEPT');
const KEPT_NAME = env('KEPT_NAME');
const KEPT_CHAT = env('KEPT_CHAT');
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));

const log = (message) => console.log(`erase_page: ${message}`);
const failures = [];

async function scan(page, label) {
  for (const problem of await scanColorSchemes(page, label, log)) failures.push(`axe on ${problem}`);
}

/** The whole document as served (title, attributes and text): where a name could hide. */
const wholePage = (page) => page.evaluate(() => document.documentElement.outerHTML);

/** Clicks the export link and parses the downloaded file as JSON. */
async function downloadExport(page) {
  const link = page.getByTestId('export-player');
  const href = await link.getAttribute('href');
  if (href !== `/players/${ERASED}/export`) failures.push(`the export link goes to ${href}`);
  const [download] = await Promise.all([
    page.waitForEvent('download', { timeout: WAIT_MS }),
    link.click(),
  ]);
  const failed = await download.failure();
  if (failed) fail(`the export download failed: ${failed}`);
  const text = readFileSync(await download.path(), 'utf8');
  try {
    return { text, json: JSON.parse(text) };
  } catch (error) {
    return fail(`the export is not JSON (${error.message}): ${text.slice(0, 200)}`);
  }
}

async function checkExport(page) {
  const { text, json } = await downloadExport(page);
  if (typeof json !== 'object' || json === null) failures.push(`the export is ${text.slice(0, 100)}`);
  if (!text.includes(ERASED) || !text.includes(ERASED_NAME) || !text.includes(ERASED_CHAT)) {
    failures.push(`the export lacks the player's UUID, name or chat: ${text.slice(0, 300)}`);
  } else {
    log(`the export link downloads JSON (${text.length} bytes) holding the name and chat`);
  }
}

async function checkConfirmPage(page) {
  await Promise.all([
    page.waitForURL((url) => url.pathname === `/players/${ERASED}/erase`, { timeout: WAIT_MS }),
    page.getByTestId('erase-player-link').click(),
  ]);
  const heading = (await page.locator('h2.subject').textContent()).trim();
  if (heading !== `Erase ${ERASED_NAME}`) failures.push(`the confirm page's heading reads ${heading}`);
  await scan(page, `/players/${ERASED}/erase`);
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'player-erase.png'), fullPage: true });

  // Without the box ticked the browser does not send the form (the box is required) ...
  const box = page.getByLabel(/this player's personal data is erased for good/);
  await page.getByTestId('erase-player').click();
  const missing = await box.evaluate((input) => input.validity.valueMissing);
  if (!missing || new URL(page.url()).pathname !== `/players/${ERASED}/erase`) {
    failures.push(`an unticked box did not stop the form (valueMissing ${missing}, at ${page.url()})`);
  }
  // ... and when it does anyway (the check taken away), the server refuses with a message.
  await box.evaluate((input) => input.removeAttribute('required'));
  const [refused] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/erase'), { timeout: WAIT_MS }),
    page.getByTestId('erase-player').click(),
  ]);
  await page.getByTestId('erase-error').waitFor({ timeout: WAIT_MS }).catch(() => {});
  const message = await page.getByTestId('erase-error').textContent().catch(() => '');
  if (refused.status() !== 422 || !message.includes('Tick the box to confirm the erasure; nothing was erased.')) {
    failures.push(`an unticked erase answered ${refused.status()}: ${message}`);
  } else {
    log('an unticked box: stopped by the browser, then 422 with a message from the server');
  }
  await scan(page, `/players/${ERASED}/erase (refused)`);
  const still = await page.request.get(`${BASE_URL}/players/${ERASED}`);
  if (!(await still.text()).includes(ERASED_NAME)) failures.push('the refused erase erased the player anyway');
}

async function erase(page) {
  await page.getByLabel(/this player's personal data is erased for good/).check();
  await Promise.all([
    page.waitForURL((url) => url.pathname === `/players/${ERASED}`, { timeout: WAIT_MS }),
    page.getByTestId('erase-player').click(),
  ]);
  const heading = (await page.locator('#player-name').textContent()).trim();
  if (heading !== 'erased player') failures.push(`the erased player's page is headed ${heading}`);
  if (await page.getByTestId('erased-player').count() !== 1) failures.push('the player page does not say the player is erased');
  if (await page.getByTestId('erase-player-link').count() !== 0) failures.push('the erased player still has an erase link');
  const html = await wholePage(page);
  for (const value of [ERASED_NAME, ERASED_CHAT]) {
    if (html.includes(value)) failures.push(`the erased player's page still holds ${value}`);
  }
  await scan(page, `/players/${ERASED} (erased)`);
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'player-erased.png'), fullPage: true });
  log('erased: the page shows an erased player, nothing of the old name or chat');

  await page.goto(`${BASE_URL}/chat?player=${ERASED}`);
  const chat = await wholePage(page);
  for (const value of [ERASED_NAME, ERASED_CHAT]) {
    if (chat.includes(value)) failures.push(`the erased player's chat log still holds ${value}`);
  }
  await page.goto(`${BASE_URL}/chat`);
  const all = await wholePage(page);
  if (all.includes(ERASED_NAME) || all.includes(ERASED_CHAT)) failures.push('the chat log still holds the erased player');
  if (!all.includes(KEPT_NAME) || !all.includes(KEPT_CHAT)) failures.push('the chat log lost the other player');

  // A new export holds nothing of the name nor the chat, and is still JSON.
  await page.goto(`${BASE_URL}/players/${ERASED}`);
  const { text } = await downloadExport(page);
  if (text.includes(ERASED_NAME) || text.includes(ERASED_CHAT)) failures.push(`the erased player's export still holds personal data: ${text.slice(0, 300)}`);

  const kept = await page.goto(`${BASE_URL}/players/${KEPT}`);
  const keptHtml = await wholePage(page);
  if (kept.status() !== 200 || !keptHtml.includes(KEPT_NAME) || !keptHtml.includes(KEPT_CHAT)) {
    failures.push(`the other player's page (${kept.status()}) lost their name or chat`);
  }
}

async function checkModerator(page) {
  await page.goto(`${BASE_URL}/`);
  await signOut(page);
  await signIn(page, BASE_URL, MODERATOR_LOGIN, PASSWORD, `/players/${KEPT}`);
  if (await page.getByTestId('erase-player-link').count() !== 0) failures.push("a moderator sees the erase link");
  const refused = await refusalProblem(page, BASE_URL, `/players/${KEPT}/erase`, { role: 'Moderator' });
  if (refused) failures.push(refused);
  // The form's POST, sent as the browser would (same origin), is refused too.
  const posted = await page.request.post(`${BASE_URL}/players/${KEPT}/erase`, {
    form: { confirm: 'yes' }, headers: { Origin: BASE_URL }, maxRedirects: 0,
  });
  if (posted.status() !== 403) failures.push(`a moderator's erase POST answered ${posted.status()}`);
  const still = await page.request.get(`${BASE_URL}/players/${KEPT}`);
  if (!(await still.text()).includes(KEPT_NAME)) failures.push("a moderator's POST erased the player");
  if (!refused && posted.status() === 403) log('moderator: no erase link, 403 on the confirm page and the POST');
}

async function main() {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // bypassCSP lets the test add axe-core; the pages' own policy is checked by the API tests.
  const browser = await launch({ bypassCSP: true });
  try {
    const { context } = browser;
    const page = context.pages()[0] ?? await context.newPage();
    const problems = [];
    // The unticked erase's 422 and the moderator's 403 are expected.
    watchProblems(page, problems, { allowStatus: (r) => [403, 422].includes(r.status()) });
    await signIn(page, BASE_URL, OWNER_LOGIN, PASSWORD, `/players/${ERASED}`);
    const heading = (await page.locator('#player-name').textContent()).trim();
    if (heading !== ERASED_NAME) failures.push(`the player page is headed ${heading}`);
    await checkExport(page);
    await checkConfirmPage(page);
    await erase(page);
    await checkModerator(page);
    // htmx logs every error answer it swaps in; the unticked erase's 422 page is one by design.
    failures.push(...problems.filter((p) => !p.includes(`Response Status Error Code 422 from /players/${ERASED}/erase`)));
    if (failures.length > 0) fail(`\n  - ${failures.join('\n  - ')}`);
  } finally {
    await browser.close();
  }
}

run('erase_page', 180_000, main);
