// Browser test of the Players page: Debian's headless Chromium, driven by playwright-core, signs
// in as a moderator on a stack fed through ingest, sees who is online now and who was seen
// recently, searches with the form by a past name (the result shows the current name and the
// past name that matched) and follows the link to the player's page, finds a hostile name shown
// as text, gets a message for a too-short search and an empty state for a name nobody had, and
// axe-core finds nothing serious. Then a viewer: no link, and the page answers 403.
//
//   BASE_URL=… MODERATOR_LOGIN=… VIEWER_LOGIN=… PASSWORD=… RENAMED=… LEFT=… HOSTILE=… \
//     HOSTILE_NAME=… OUTSIDER=… node tests/browser/players_page.mjs
//
// tests/pipeline/players_page.rs seeds the players and runs this. CHROMIUM_BIN (default
// /usr/bin/chromium), SCREENSHOT_DIR (default <repo>/target/browser). Exits 0 when every check
// passed, 1 with the failures otherwise.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  WAIT_MS, checkInBrowser, env, navLinks, refusalProblems, run, scanColorSchemes, signIn,
} from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const MODERATOR_LOGIN = env('MODERATOR_LOGIN');
const VIEWER_LOGIN = env('VIEWER_LOGIN');
const PASSWORD = env('PASSWORD');
const RENAMED = env('RENAMED');
const LEFT = env('LEFT');
const HOSTILE = env('HOSTILE');
const HOSTILE_NAME = env('HOSTILE_NAME');
const OUTSIDER = env('OUTSIDER');
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));

const log = (message) => console.log(`players_page: ${message}`);
const failures = [];

/** The rows of one list: uuid, link, and the text of each cell. */
const rows = (page, testid) => page.$$eval(`[data-testid="${testid}"]`, (trs) => trs.map((tr) => ({
  uuid: tr.dataset.uuid,
  link: tr.querySelector('a[href^="/players/"]')?.getAttribute('href'),
  cells: [...tr.children].map((cell) => cell.textContent.trim()),
})));

async function scan(page, label) {
  for (const problem of await scanColorSchemes(page, label, log)) failures.push(`axe on ${problem}`);
}

async function checkLists(page) {
  await signIn(page, BASE_URL, MODERATOR_LOGIN, PASSWORD, '/players');
  const links = await navLinks(page);
  if (!links.includes('/players')) failures.push(`a moderator's bar lacks /players: ${links.join(' ')}`);
  const online = await rows(page, 'online-row');
  const onlineIds = online.map((row) => row.uuid).sort();
  if (JSON.stringify(onlineIds) !== JSON.stringify([RENAMED, HOSTILE].sort())) {
    failures.push(`online now lists ${JSON.stringify(onlineIds)}, expected the renamed and the hostile player`);
  }
  if (!online.every((row) => row.cells[1] === 'Lobby')) failures.push(`online rows name their server: ${JSON.stringify(online)}`);
  const heading = await page.locator('#online-heading').textContent();
  if (!heading.includes('(2)')) failures.push(`the online heading reads ${heading}`);
  const recent = (await rows(page, 'recent-row')).map((row) => row.uuid);
  if (JSON.stringify(recent) !== JSON.stringify([HOSTILE, RENAMED, LEFT])) {
    failures.push(`recently seen lists ${JSON.stringify(recent)}, expected hostile, renamed, left (newest first)`);
  }
  const left = (await rows(page, 'recent-row')).find((row) => row.uuid === LEFT);
  if (left?.cells[2] !== 'Offline') failures.push(`the player who left reads ${JSON.stringify(left)}`);
  await checkHostile(page, '/players');
  await scan(page, '/players');
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'players.png'), fullPage: true });
}

/** The hostile name is on the page as text and nowhere as markup. */
async function checkHostile(page, label) {
  const injected = await page.evaluate(() => document.querySelectorAll('#pwned-player').length);
  if (injected !== 0) failures.push(`${label}: a hostile name was rendered as markup`);
  const text = await page.locator('main').textContent();
  if (!text.includes(HOSTILE_NAME)) failures.push(`${label}: the hostile name is not shown as text`);
}

async function checkSearch(page) {
  // The form: a fragment of the old name, typed in another case, then Search (a plain GET).
  await page.goto(`${BASE_URL}/players`);
  await page.getByLabel('Name or UUID').fill('GRUMPYmin');
  await Promise.all([
    page.waitForURL((url) => url.searchParams.get('q') === 'GRUMPYmin', { timeout: WAIT_MS }),
    page.getByRole('button', { name: 'Search' }).click(),
  ]);
  const found = await rows(page, 'result-row');
  if (found.length !== 1 || found[0].uuid !== RENAMED) {
    failures.push(`searching GRUMPYmin found ${JSON.stringify(found)}, expected only the renamed player (never ${OUTSIDER})`);
  } else {
    const [name, past, , status] = found[0].cells;
    if (name !== 'ShinyNewName' || past !== 'was OldGrumpyMiner' || status !== 'Online') {
      failures.push(`the result reads ${JSON.stringify(found[0].cells)}`);
    } else {
      log('a past name finds the player, shown under the current name');
    }
  }
  if (await page.locator('[data-testid="online-row"]').count() !== 0) failures.push('the online list shows beside results');
  await scan(page, '/players?q=GRUMPYmin');

  // Follow the result to the player's page.
  await Promise.all([
    page.waitForURL((url) => url.pathname === `/players/${RENAMED}`, { timeout: WAIT_MS, waitUntil: 'commit' })
      .catch(() => {}),
    page.locator('[data-testid="result-row"] a').first().click(),
  ]);
  if (new URL(page.url()).pathname !== `/players/${RENAMED}`) {
    failures.push(`following the result led to ${page.url()}`);
  } else {
    log(`followed the result to ${new URL(page.url()).pathname}`);
  }

  // A 2-letter prefix of the current name; then the hostile name by a fragment of it.
  let response = await page.goto(`${BASE_URL}/players?q=sH`);
  const byPrefix = await rows(page, 'result-row');
  if (response.status() !== 200 || byPrefix.length !== 1 || byPrefix[0].cells[1] !== '-') {
    failures.push(`?q=sH answered ${response.status()} with ${JSON.stringify(byPrefix)}`);
  }
  await page.goto(`${BASE_URL}/players?q=${encodeURIComponent('src=x')}`);
  const hostile = await rows(page, 'result-row');
  if (hostile.length !== 1 || hostile[0].uuid !== HOSTILE || hostile[0].cells[0] !== HOSTILE_NAME) {
    failures.push(`searching src=x found ${JSON.stringify(hostile)}`);
  }
  await checkHostile(page, '/players?q=src=x');
  const input = await page.getByLabel('Name or UUID').inputValue();
  if (input !== 'src=x') failures.push(`the field keeps ${input}`);

  // Nothing found, and a search too short: messages, never a 5xx.
  response = await page.goto(`${BASE_URL}/players?q=nobodyhadthis`);
  const empty = await page.locator('main').textContent();
  if (response.status() !== 200 || !empty.includes('No player has or had a name matching')) {
    failures.push(`an unknown name answered ${response.status()}: ${empty.trim().slice(0, 200)}`);
  }
  response = await page.goto(`${BASE_URL}/players?q=x`);
  const message = await page.locator('.error[role="alert"]').textContent().catch(() => '');
  if (response.status() !== 422 || !message.includes('2 to 100 characters')) {
    failures.push(`a 1-character search answered ${response.status()}: ${message}`);
  } else {
    log('too short: 422 with a message');
  }
  if (await page.getByRole('button', { name: 'Search' }).count() !== 1) failures.push('the form is gone on the error page');
  await scan(page, '/players?q=x');
}

async function checkViewer(page) {
  const refused = await refusalProblems(page, BASE_URL, {
    login: VIEWER_LOGIN, password: PASSWORD, role: 'Viewer', link: '/players', path: '/players?q=grumpy', shows: (text) => !text.includes('ShinyNewName'),
  });
  failures.push(...refused);
  if (refused.length === 0) log('viewer: no link, 403');
}

async function main() {
  // The too-short search's 422 and the viewer's 403 are expected.
  const allowStatus = (r) => [403, 422].includes(r.status());
  await checkInBrowser({ failures, allowStatus, screenshotDir: SCREENSHOT_DIR }, async (page) => {
    await checkLists(page);
    await checkSearch(page);
    await checkViewer(page);
  });
}

run('players_page', 120_000, main);
