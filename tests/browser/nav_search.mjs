// Browser test of the dashboard's header: Debian's headless Chromium, driven by playwright-core,
// signs in as an owner (the most groups) on a stack fed through ingest and checks that at
// 1440 px the header is one row (element boxes measured) with the groups as drop-downs over the
// page and the current page and group marked; that at 390 px the menu opens over the page
// without moving `main` and closes with Escape; that "/" focuses the player search (not while
// typing in a field), typing shows suggestions, the arrow keys choose one and Enter opens its
// Investigate page, and Enter on an exact name opens it too; and that axe-core finds nothing
// serious or critical, light and dark, with the menus and suggestions open.
//
//   BASE_URL=… OWNER_LOGIN=… PASSWORD=… RENAMED=… node tests/browser/nav_search.mjs
//
// tests/pipeline/nav_browser.rs seeds the players and runs this. CHROMIUM_BIN (default
// /usr/bin/chromium), SCREENSHOT_DIR (default <repo>/target/browser). Exits 0 when every check
// passed, 1 with the failures otherwise.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WAIT_MS, checkInBrowser, env, run, scanColorSchemes, signIn, waitFor } from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const OWNER_LOGIN = env('OWNER_LOGIN');
const PASSWORD = env('PASSWORD');
const RENAMED = env('RENAMED');
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));

const log = (message) => console.log(`nav_search: ${message}`);
const failures = [];

async function scan(page, label) {
  for (const problem of await scanColorSchemes(page, label, log)) failures.push(`axe on ${problem}`);
}

/** The boxes of the header's parts (brand, bar, search, who) and of the header itself. */
const headerBoxes = (page) => page.evaluate(() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height }; };
  const header = document.querySelector('header.topbar');
  const items = [...document.querySelectorAll('header.topbar .nav > li')];
  return {
    header: box(header),
    parts: [...header.children].filter((el) => getComputedStyle(el).display !== 'none').map((el) => ({ name: el.className || el.tagName, ...box(el) })),
    items: items.map((el) => ({ name: el.textContent.trim().split('\n')[0], ...box(el) })),
  };
});

const mainTop = (page) => page.evaluate(() => document.querySelector('main').getBoundingClientRect().top);

async function checkWideHeader(page) {
  // 1440 px, and 1280 px (the docs' screenshots, a common laptop) and 1000 px too.
  for (const [width, path] of [[1280, '/players'], [1000, '/settings'], [1440, '/'], [1440, '/players'], [1440, '/analytics/trends'], [1440, '/settings'], [1440, '/audit']]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${BASE_URL}${path}`);
    const { header, parts, items } = await headerBoxes(page);
    // One row: every part and every item of the bar sits on the same line, and the header is
    // as tall as one control.
    const first = parts[0];
    const centre = (b) => (b.top + b.bottom) / 2;
    for (const part of [...parts, ...items]) {
      if (Math.abs(centre(part) - centre(first)) > 6) {
        failures.push(`at ${width} px on ${path}, ${part.name} is not on the header's row (${JSON.stringify(part)} vs ${JSON.stringify(first)})`);
      }
    }
    if (header.height > 64) failures.push(`at ${width} px on ${path} the header is ${header.height}px tall`);
    if (parts.length !== 4) failures.push(`at ${width} px on ${path} the header shows ${parts.map((p) => p.name).join(', ')}`);
  }
  log('at 1000, 1280 and 1440 px the header is one row');

  // /settings: the page and its group are marked; the group's drop-down opens over the page.
  await page.goto(`${BASE_URL}/settings`);
  const marked = await page.$$eval('nav[aria-label="Dashboard"] [aria-current]', (els) => els.map((el) => `${el.tagName}:${el.getAttribute('aria-current')}:${el.textContent.trim()}`));
  if (JSON.stringify(marked) !== JSON.stringify(['SUMMARY:true:Administration', 'A:page:Settings'])) {
    failures.push(`on /settings the marked items are ${JSON.stringify(marked)}`);
  }
  const before = await mainTop(page);
  const group = page.locator('.nav-group summary', { hasText: 'Analytics' });
  await group.click();
  const trends = page.getByRole('link', { name: 'Trends', exact: true });
  if (!await trends.isVisible()) failures.push('opening Analytics shows no Trends link');
  if (await mainTop(page) !== before) failures.push('opening a group moved the page');
  if (await group.getAttribute('aria-expanded') !== 'true') failures.push('the open group is not aria-expanded');
  const closed = await page.$$eval('.nav-group summary[aria-expanded="false"]', (els) => els.map((el) => el.textContent.trim()));
  if (JSON.stringify(closed) !== JSON.stringify(['Moderation', 'Administration'])) failures.push(`closed groups: ${JSON.stringify(closed)}`);
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'nav-1440-group.png') });
  await scan(page, '/settings with a group open (1440 px)');
  // Opening another closes it; Escape closes the open one and gives focus back to it.
  await page.locator('.nav-group summary', { hasText: 'Moderation' }).click();
  if (await trends.isVisible()) failures.push('opening Moderation left Analytics open');
  await page.keyboard.press('Escape');
  if (await page.getByRole('link', { name: 'Players', exact: true }).isVisible()) failures.push('Escape left Moderation open');
  await Promise.all([
    page.waitForURL((url) => url.pathname === '/analytics/trends', { timeout: WAIT_MS }),
    (async () => { await group.click(); await trends.click(); })(),
  ]);
  log('groups open over the page, one at a time; the current page and group are marked');
}

async function checkPhoneMenu(page) {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${BASE_URL}/players`);
  const { header } = await headerBoxes(page);
  const before = await mainTop(page);
  const menu = page.locator('summary.menu-toggle');
  if (!await menu.isVisible()) failures.push('at 390 px there is no Menu button');
  if (await page.getByRole('link', { name: 'Servers', exact: true }).isVisible()) failures.push('at 390 px the bar shows before the menu opens');
  await menu.click();
  const list = page.locator('.menu > .nav');
  if (!await list.isVisible()) failures.push('the menu did not open');
  if (await mainTop(page) !== before) failures.push(`opening the menu moved main (${before} -> ${await mainTop(page)})`);
  const over = await page.evaluate(() => {
    const list = document.querySelector('.menu > .nav').getBoundingClientRect();
    const main = document.querySelector('main').getBoundingClientRect();
    const x = list.left + list.width / 2;
    const y = Math.min(list.bottom - 4, main.top + 20);
    return { covers: list.bottom > main.top, top: document.elementFromPoint(x, y)?.closest('.menu') !== null };
  });
  if (!over.covers || !over.top) failures.push(`the open menu is not over the page: ${JSON.stringify(over)}`);
  // The current group is open in the menu, its page marked.
  if (!await page.getByRole('link', { name: 'Players', exact: true }).isVisible()) failures.push('the menu does not show the current group open');
  if (await menu.getAttribute('aria-expanded') !== 'true') failures.push('the open menu is not aria-expanded');
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'nav-390-menu.png') });
  await scan(page, '/players with the menu open (390 px)');
  await page.keyboard.press('Escape');
  if (await list.isVisible()) failures.push('Escape did not close the menu');
  if (header.height > 110) failures.push(`at 390 px the header is ${header.height}px tall`);
  log(`at 390 px the menu opens over the page (header ${header.height}px) and closes with Escape`);
}

async function checkSearch(page) {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${BASE_URL}/`);
  const input = page.locator('#player-find-q');
  await page.locator('h1').click();
  await page.keyboard.press('/');
  if (!await input.evaluate((el) => el === document.activeElement)) failures.push('"/" did not focus the player search');
  if (await input.inputValue() !== '') failures.push('"/" was typed into the search');
  // Not while typing in a field: "/" is text there.
  await page.goto(`${BASE_URL}/punishments`);
  const player = page.getByLabel('Player (name or UUID)');
  await player.click();
  await page.keyboard.type('a/b');
  if (await player.inputValue() !== 'a/b') failures.push(`"/" in a field was taken: ${await player.inputValue()}`);
  if (await input.evaluate((el) => el === document.activeElement)) failures.push('"/" in a field moved the focus');

  await page.goto(`${BASE_URL}/`);
  await page.keyboard.press('/');
  await page.keyboard.type('grum', { delay: 40 });
  await waitFor(page, 'suggestions for "grum"', () => document.querySelectorAll('#player-suggestions [role="option"]').length > 0);
  const options = await page.$$eval('#player-suggestions [role="option"]', (els) => els.map((el) => ({ uuid: el.dataset.uuid, text: el.textContent.replace(/\s+/g, ' ').trim() })));
  if (options.length !== 1 || options[0].uuid !== RENAMED || !options[0].text.includes('was OldGrumpyMiner')) {
    failures.push(`suggestions for "grum": ${JSON.stringify(options)}`);
  }
  if (await input.getAttribute('aria-expanded') !== 'true') failures.push('the combobox is not expanded with suggestions');
  await page.keyboard.press('ArrowDown');
  const chosen = await input.getAttribute('aria-activedescendant');
  const selected = await page.$$eval('#player-suggestions [aria-selected="true"]', (els) => els.map((el) => el.id));
  if (!chosen || JSON.stringify(selected) !== JSON.stringify([chosen])) failures.push(`ArrowDown chose ${chosen}, selected ${selected}`);
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'nav-1440-suggestions.png') });
  await scan(page, '/ with suggestions open (1440 px)');
  await page.locator('#player-find-q').focus();
  await Promise.all([
    page.waitForURL((url) => url.pathname === `/players/${RENAMED}`, { timeout: WAIT_MS }).catch(() => failures.push(`Enter on a suggestion led to ${page.url()}`)),
    page.keyboard.press('Enter'),
  ]);
  // Without choosing: the form; one player named so opens their page.
  await page.goto(`${BASE_URL}/servers`);
  await input.fill('ShinyNewName');
  // Once its suggestion shows (a request still on its way when the page leaves is aborted,
  // which htmx logs as an error).
  await waitFor(page, 'suggestions for "ShinyNewName"', () => document.querySelectorAll('#player-suggestions [role="option"]').length > 0);
  await Promise.all([
    page.waitForURL((url) => url.pathname === `/players/${RENAMED}`, { timeout: WAIT_MS }).catch(() => failures.push(`Enter on an exact name led to ${page.url()}`)),
    input.press('Enter'),
  ]);
  // Escape closes the suggestions.
  await page.goto(`${BASE_URL}/`);
  await input.pressSequentially('Shiny', { delay: 40 });
  await waitFor(page, 'suggestions for "Shiny"', () => document.querySelectorAll('#player-suggestions [role="option"]').length > 0);
  await input.press('Escape');
  if (await input.getAttribute('aria-expanded') !== 'false' || await page.locator('#player-suggestions [role="option"]').count() > 0) {
    failures.push('Escape did not close the suggestions');
  }
  log('"/" focuses the search; suggestions, arrows and Enter open Investigate');
}

run('nav_search', 200_000, async () => {
  await checkInBrowser({ failures, screenshotDir: SCREENSHOT_DIR }, async (page) => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await signIn(page, BASE_URL, OWNER_LOGIN, PASSWORD);
    await scan(page, '/ (1440 px)');
    await checkWideHeader(page);
    await checkPhoneMenu(page);
    await checkSearch(page);
  });
});
