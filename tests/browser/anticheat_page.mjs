// Browser test of the Anti-cheat page: Debian's headless Chromium, driven by playwright-core,
// signs in as a moderator on a stack fed through ingest, and checks the flags: the most-flagged
// players and the flags per check of the last 24 hours, each filter narrows the list (check,
// player by name, server, minimum violation level), a bad filter is a message on the page
// (never a 5xx), "Older flags" pages to the end without a repeat, a flag posted through ingest
// while the page is open appears at the top without a reload when it matches the filters (and
// not when it does not), hostile names, checks and details show as text, and axe-core finds
// nothing serious. Then a viewer: no link, and the page and its feed answer 403.
//
//   BASE_URL=… MODERATOR_LOGIN=… VIEWER_LOGIN=… PASSWORD=… PLUGIN_KEY=… LOBBY_ID=… \
//     HACKER_UUID=… SPEEDY_UUID=… HOSTILE_NAME=… HOSTILE_CHECK=… HOSTILE_DETAIL=… TOTAL=58 \
//     node tests/browser/anticheat_page.mjs
//
// tests/pipeline/anticheat_page.rs seeds the flags and runs this. CHROMIUM_BIN (default
// /usr/bin/chromium), SCREENSHOT_DIR (default <repo>/target/browser). Exits 0 when every check
// passed, 1 with the failures otherwise.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  checkInBrowser, env, fail, navLinks, refusalProblems, run, scanColorSchemes, signIn, waitFor,
} from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const MODERATOR_LOGIN = env('MODERATOR_LOGIN');
const VIEWER_LOGIN = env('VIEWER_LOGIN');
const PASSWORD = env('PASSWORD');
const PLUGIN_KEY = env('PLUGIN_KEY');
const LOBBY_ID = env('LOBBY_ID');
const HACKER = env('HACKER_UUID');
const SPEEDY = env('SPEEDY_UUID');
const HOSTILE_NAME = env('HOSTILE_NAME');
const HOSTILE_CHECK = env('HOSTILE_CHECK');
const HOSTILE_DETAIL = env('HOSTILE_DETAIL');
const TOTAL = Number(env('TOTAL'));
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));
const LIVE_PLAYER = '6e000000-0000-4000-8000-0000000000c1';

const log = (message) => console.log(`anticheat_page: ${message}`);
const failures = [];

/** The rows of the flag list. */
const rows = (page) => page.$$eval('[data-testid="flag-row"]', (trs) => trs.map((tr) => ({
  id: tr.dataset.id,
  player: tr.dataset.player,
  check: tr.querySelector('[data-testid="check"]').textContent.trim(),
  vl: Number(tr.querySelector('[data-testid="vl"]').textContent),
  link: tr.querySelector('a[href^="/players/"]')?.getAttribute('href'),
  isNew: tr.dataset.new === 'true',
  text: tr.textContent,
})));

async function open(page, query) {
  const response = await page.goto(`${BASE_URL}/anticheat${query ? `?${query}` : ''}`);
  return { status: response?.status() ?? 0, rows: await rows(page) };
}

async function scan(page, label) {
  for (const problem of await scanColorSchemes(page, label, log)) failures.push(`axe on ${problem}`);
}

/** Posts flags through ingest with the plugin key, from node (not the page). */
async function postFlags(flags) {
  const response = await fetch(`${BASE_URL}/api/plugin/anticheat-flags`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${PLUGIN_KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(flags),
  });
  const body = await response.text();
  if (response.status !== 202) fail(`posting flags: ${response.status} ${body}`);
}

async function checkSummaries(page) {
  await signIn(page, BASE_URL, MODERATOR_LOGIN, PASSWORD, '/anticheat');
  const links = await navLinks(page);
  if (!links.includes('/anticheat')) failures.push(`a moderator's bar lacks /anticheat: ${links.join(' ')}`);
  const most = await page.$$eval('[data-testid="most-flagged"]', (trs) => trs.map((tr) => `${tr.dataset.player}:${tr.dataset.flags}`));
  if (most.slice(0, 2).join(' ') !== `${HACKER}:4 ${SPEEDY}:3` || most.length !== 3) {
    failures.push(`most flagged in 24 h: ${most.join(' ')}`);
  }
  const checks = await page.$$eval('[data-testid="check-count"]', (trs) => trs.map((tr) => `${tr.dataset.check}:${tr.dataset.flags}`));
  const expected = ['Reach:4', 'Speed:2', `${HOSTILE_CHECK}:1`, 'Timer:1'];
  if (checks.join('|') !== expected.join('|')) failures.push(`flags per check: ${checks.join('|')}, expected ${expected.join('|')}`);
  else log(`summaries: ${most.length} players, checks ${checks.join(', ')}`);
}

async function checkList(page) {
  const first = await rows(page);
  if (first.length !== 50) failures.push(`the first page shows ${first.length} rows, expected 50`);
  const badLinks = first.filter((row) => row.link !== `/players/${row.player}`);
  if (badLinks.length > 0) failures.push(`rows without a link to their player: ${badLinks.length}`);
  // The hostile flag is the newest: its name, check and detail are text.
  const top = first[0];
  const injected = await page.evaluate(() => document.querySelectorAll('main img, main svg, main script, #pwned, #pwned-check').length);
  if (injected !== 0) failures.push('a hostile name, check or detail was rendered as markup');
  if (!top || !top.text.includes(HOSTILE_NAME) || top.check !== `${HOSTILE_CHECK} A` || !top.text.includes(HOSTILE_DETAIL)) {
    failures.push(`the hostile flag does not show as text: ${JSON.stringify(top)}`);
  }
  if (await page.title() === 'pwned') failures.push('hostile text ran as script');
  await scan(page, '/anticheat');
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'anticheat.png'), fullPage: true });

  const seen = new Set(first.map((row) => row.id));
  let pages = 1;
  while (await page.locator('#older').count() > 0) {
    await page.locator('#older').click();
    await waitFor(page, 'the older page shows', (ids) => {
      const row = document.querySelector('[data-testid="flag-row"]');
      return row && !ids.includes(row.dataset.id);
    }, [...seen]);
    for (const row of await rows(page)) {
      if (seen.has(row.id)) failures.push(`flag ${row.id} shows on two pages`);
      seen.add(row.id);
    }
    pages += 1;
    if (pages > 10) fail('paging does not end');
  }
  if (seen.size !== TOTAL || pages !== 2) failures.push(`paging showed ${seen.size} flags on ${pages} pages, expected ${TOTAL} on 2`);
  else log(`paging: ${TOTAL} flags on 2 pages, none twice`);
}

async function checkFilters(page) {
  const expect = async (query, count, check, what) => {
    const { status, rows: shown } = await open(page, query);
    if (status !== 200 || shown.length !== count || !shown.every(check)) {
      failures.push(`${what} (?${query}): ${status}, ${shown.length} rows, expected ${count}: ${JSON.stringify(shown.map((r) => [r.check, r.vl]))}`);
    } else {
      log(`${what}: ${count} rows`);
    }
  };
  await expect('check=reach', 4, (row) => row.check.toLowerCase() === 'reach a', 'one check, any case');
  await expect('player=speedy', 3, (row) => row.player === SPEEDY, 'a player by name');
  await expect(`server=${LOBBY_ID}`, 5, () => true, 'one server');
  await expect('min_vl=10', 2, (row) => row.vl >= 10, 'a minimum violation level');
  const bad = await open(page, 'min_vl=lots&player=');
  const message = await page.locator('.error[role="alert"]').textContent().catch(() => '');
  if (bad.status !== 422 || !message.includes('Minimum violation level: must be a finite number')) {
    failures.push(`a bad minimum answered ${bad.status}: ${message.trim()}`);
  } else {
    log('bad filter: 422 with a message');
  }
  await scan(page, '/anticheat (bad filter)');
}

/** Flags posted while the filtered page is open: the matching one appears, the others do not. */
async function checkLive(page) {
  // The form, as a person uses it: the filtered list, then the live feed of the same filters.
  await page.goto(`${BASE_URL}/anticheat`);
  await page.getByLabel('Check', { exact: true }).fill('Reach');
  await page.getByLabel('Minimum violation level').fill('5');
  await Promise.all([
    page.waitForURL((url) => url.search.includes('min_vl=5'), { timeout: 15_000 }),
    page.getByRole('button', { name: 'Apply' }).click(),
  ]);
  await waitFor(page, 'the filtered list shows the three Reach flags of level 5 or more',
    () => document.querySelectorAll('[data-testid="flag-row"]').length === 3
      && document.querySelector('tbody[data-stream]')?.dataset.live === '1');
  await page.evaluate(() => { window.__notReloaded = true; });
  const now = new Date().toISOString();
  const live = (check, vl, detail) => ({
    server_id: LOBBY_ID, player_uuid: LIVE_PLAYER, player_name: HOSTILE_NAME, check_name: check,
    check_type: 'B', violation_level: vl, detail, flagged_at: now,
  });
  // One message, in this order: the two that do not match come first, so by the time the
  // matching one shows, the feed has passed over them.
  await postFlags([live('Timer', 50, 'wrong check'), live('Reach', 1, 'too low'), live('Reach', 9, HOSTILE_DETAIL)]);
  await waitFor(page, 'the matching flag appears at the top without a reload', (player) => {
    const top = document.querySelector('[data-testid="flag-row"]');
    return window.__notReloaded === true && top && top.dataset.player === player && top.dataset.new === 'true';
  }, LIVE_PLAYER);
  const shown = await rows(page);
  const fresh = shown.filter((row) => row.player === LIVE_PLAYER);
  if (shown.length !== 4 || fresh.length !== 1 || fresh[0].vl !== 9 || fresh[0].check !== 'Reach B') {
    failures.push(`after the live flags the list is ${JSON.stringify(shown.map((r) => [r.check, r.vl]))}`);
  }
  if (!fresh[0]?.text.includes(HOSTILE_NAME) || !fresh[0]?.text.includes(HOSTILE_DETAIL)) failures.push('the live flag\'s hostile text is not shown as text');
  const injected = await page.evaluate(() => document.querySelectorAll('main img, main script, #pwned').length);
  if (injected !== 0) failures.push('the live flag was rendered as markup');
  if (fresh[0]?.link !== `/players/${LIVE_PLAYER}`) failures.push('the live row does not link to its player');
  log('live: the matching flag appeared at the top; the two others did not');
  await scan(page, '/anticheat (live row)');
}

async function checkViewer(page) {
  const refused = await refusalProblems(page, BASE_URL, {
    login: VIEWER_LOGIN, password: PASSWORD, role: 'Viewer', link: '/anticheat', path: '/anticheat',
  });
  failures.push(...refused);
  const feed = await page.evaluate(async () => (await fetch('/anticheat/stream')).status);
  if (feed !== 403) failures.push(`a viewer opening the flag feed got ${feed}`);
  else log('viewer: no link, page and feed 403');
}

async function main() {
  // The bad filter's 422 and the viewer's 403s are expected.
  const allowStatus = (r) => [403, 422].includes(r.status());
  await checkInBrowser({ failures, allowStatus, screenshotDir: SCREENSHOT_DIR }, async (page) => {
    await checkSummaries(page);
    await checkList(page);
    await checkFilters(page);
    await checkLive(page);
    await checkViewer(page);
  });
}

run('anticheat_page', 180_000, main);
