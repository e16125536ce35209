// Browser test of the Punishments page: Debian's headless Chromium, driven by playwright-core,
// signs in as a moderator on a stack fed through ingest, and checks the account's log: newest
// first, each filter narrows it (type, player by name, staff member, server, status, time), a
// bad filter is a message on the page (never a 5xx), "Older punishments" pages to the end
// without a repeat, the revoked mute says who revoked it and why, a hostile name and reason show
// as text, and axe-core finds nothing serious. Then a viewer: no link, and the page answers 403.
//
//   BASE_URL=… MODERATOR_LOGIN=… VIEWER_LOGIN=… PASSWORD=… LOBBY_ID=… GRIEFER_UUID=… \
//     HOSTILE_UUID=… HOSTILE_NAME=… HOSTILE_REASON=… TOTAL=55 node tests/browser/punishments_page.mjs
//
// tests/pipeline/punishments_page.rs seeds the log and runs this. CHROMIUM_BIN (default
// /usr/bin/chromium), SCREENSHOT_DIR (default <repo>/target/browser). Exits 0 when every check
// passed, 1 with the failures otherwise.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  checkInBrowser, env, fail, navLinks, refusalProblems, run, scanColorSchemes, signIn,
} from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const MODERATOR_LOGIN = env('MODERATOR_LOGIN');
const VIEWER_LOGIN = env('VIEWER_LOGIN');
const PASSWORD = env('PASSWORD');
const LOBBY_ID = env('LOBBY_ID');
const GRIEFER = env('GRIEFER_UUID');
const HOSTILE = env('HOSTILE_UUID');
const HOSTILE_NAME = env('HOSTILE_NAME');
const HOSTILE_REASON = env('HOSTILE_REASON');
const TOTAL = Number(env('TOTAL'));
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));

const log = (message) => console.log(`punishments_page: ${message}`);
const failures = [];

/** The rows shown: id, type, player, status, revoked text. */
const rows = (page) => page.$$eval('[data-testid="punishment-row"]', (trs) => trs.map((tr) => ({
  id: tr.dataset.id,
  type: tr.dataset.type,
  player: tr.dataset.player,
  status: tr.querySelector('[data-testid="status"]').textContent.trim(),
  revoked: tr.querySelector('[data-testid="revoked"]').textContent.trim(),
  link: tr.querySelector('a[href^="/players/"]')?.getAttribute('href'),
  text: tr.textContent,
})));

/** Opens the page with a query (as the form would send it) and returns its status and rows. */
async function open(page, query) {
  const response = await page.goto(`${BASE_URL}/punishments${query ? `?${query}` : ''}`);
  return { status: response?.status() ?? 0, rows: await rows(page) };
}

async function scan(page, label) {
  for (const problem of await scanColorSchemes(page, label, log)) failures.push(`axe on ${problem}`);
}

async function checkList(page) {
  await signIn(page, BASE_URL, MODERATOR_LOGIN, PASSWORD, '/punishments');
  const links = await navLinks(page);
  if (!links.includes('/punishments')) failures.push(`a moderator's bar lacks /punishments: ${links.join(' ')}`);
  const first = await rows(page);
  if (first.length !== 50) failures.push(`the first page shows ${first.length} rows, expected 50`);
  if (first[0]?.player !== HOSTILE) failures.push(`the newest row is ${JSON.stringify(first[0])}, expected the revoked mute`);
  const badLinks = first.filter((row) => row.link !== `/players/${row.player}`);
  if (badLinks.length > 0) failures.push(`rows without a link to their player: ${badLinks.length}`);

  // The revoked mute: who revoked it, when and why; and the hostile name and reason as text.
  const mute = first[0];
  if (!mute || mute.status !== 'Revoked' || !/by Bob: appeal accepted$/.test(mute.revoked)) {
    failures.push(`the revoked mute reads ${JSON.stringify(mute)}`);
  }
  const injected = await page.evaluate(() => document.querySelectorAll('#punishment-list img, #punishment-list script, #pwned').length);
  if (injected !== 0) failures.push('a hostile name or reason was rendered as markup');
  if (!mute?.text.includes(HOSTILE_NAME) || !mute?.text.includes(HOSTILE_REASON)) {
    failures.push(`the hostile name and reason are not shown as text: ${mute?.text}`);
  }
  if (await page.title() === 'pwned') failures.push('a hostile reason ran as script');
  await scan(page, '/punishments');
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'punishments.png'), fullPage: true });

  // Older pages, by the link, to the end: every punishment once.
  const seen = new Set(first.map((row) => row.id));
  let pages = 1;
  while (await page.locator('#older').count() > 0) {
    await page.locator('#older').click();
    await page.waitForLoadState();
    await page.waitForFunction((ids) => {
      const top = document.querySelector('[data-testid="punishment-row"]');
      return top && !ids.includes(top.dataset.id);
    }, [...seen], { timeout: 15_000 });
    const next = await rows(page);
    for (const row of next) {
      if (seen.has(row.id)) failures.push(`row ${row.id} shows on two pages`);
      seen.add(row.id);
    }
    pages += 1;
    if (pages > 10) fail('paging does not end');
  }
  if (seen.size !== TOTAL || pages !== 2) failures.push(`paging showed ${seen.size} punishments on ${pages} pages, expected ${TOTAL} on 2`);
  else log(`paging: ${TOTAL} punishments on 2 pages, none twice`);
}

async function checkFilters(page) {
  // The form itself: a type and a player name typed, then Apply (a GET the address keeps).
  await page.goto(`${BASE_URL}/punishments`);
  await page.getByLabel('Type').selectOption('ban');
  await page.getByLabel('Player (name or UUID)').fill('griefer');
  await Promise.all([
    page.waitForURL((url) => url.search.includes('player=griefer'), { timeout: 15_000 }),
    page.getByRole('button', { name: 'Apply' }).click(),
  ]);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="punishment-row"]').length === 2, null, { timeout: 15_000 })
    .catch(() => {});
  const bans = await rows(page);
  if (bans.length !== 2 || !bans.every((row) => row.type === 'ban' && row.player === GRIEFER)) {
    failures.push(`type=ban&player=griefer shows ${JSON.stringify(bans.map((r) => [r.type, r.player]))}`);
  }
  const statuses = bans.map((row) => row.status).join(',');
  if (statuses !== 'Active,Expired') failures.push(`Griefer's bans read ${statuses}, expected Active,Expired`);

  const expect = async (query, count, check, what) => {
    const { status, rows: shown } = await open(page, query);
    if (status !== 200 || shown.length !== count || !shown.every(check)) {
      failures.push(`${what} (?${query}): ${status}, ${shown.length} rows, expected ${count}`);
    } else {
      log(`${what}: ${count} rows`);
    }
  };
  await expect('staff=Mia', 3, () => true, 'by staff name');
  await expect(`server=${LOBBY_ID}`, 2, () => true, 'on one server');
  await expect('active=true', 1, (row) => row.status === 'Active', 'in force now');
  await expect('type=warning&active=false', 50, (row) => row.type === 'warning', 'warnings not in force (first page)');
  const now = Date.now();
  const local = (ms) => new Date(ms).toISOString().slice(0, 19);
  await expect(`from=${local(now - 2_000_000)}&to=${local(now - 300_000)}`, 2, () => true, 'a time range');
  await expect(`player=${encodeURIComponent(HOSTILE_NAME)}`, 1, (row) => row.player === HOSTILE, 'by a hostile name');

  // Bad values: the page says what is wrong, keeps the form, and is not a 5xx.
  const bad = await open(page, 'server=lobby&active=maybe&from=yesterday');
  const message = await page.locator('.error[role="alert"]').textContent().catch(() => '');
  if (bad.status !== 422 || !message.includes('Server: not a UUID') || !message.includes('Status:') || !message.includes('From:')) {
    failures.push(`bad filters answered ${bad.status}: ${message.trim()}`);
  } else {
    log('bad filters: 422 with a message per field');
  }
  if (await page.getByRole('button', { name: 'Apply' }).count() !== 1) failures.push('the form is gone on the error page');
  await scan(page, '/punishments (bad filters)');
}

async function checkViewer(page) {
  const refused = await refusalProblems(page, BASE_URL, {
    login: VIEWER_LOGIN, password: PASSWORD, role: 'Viewer', link: '/punishments', path: '/punishments',
  });
  failures.push(...refused);
  if (refused.length === 0) log('viewer: no link, 403');
}

async function main() {
  // The bad filters' 422 and the viewer's 403 are expected.
  const allowStatus = (r) => [403, 422].includes(r.status());
  await checkInBrowser({ failures, allowStatus, screenshotDir: SCREENSHOT_DIR }, async (page) => {
    await checkList(page);
    await checkFilters(page);
    await checkViewer(page);
  });
}

run('punishments_page', 180_000, main);
