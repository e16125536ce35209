// Browser test of the Investigate page (/players/{uuid}): Debian's headless Chromium, driven by
// playwright-core, signs in as a moderator on a stack fed through ingest and opens one player's
// page: every section but chat shows the pipeline's data, the banned alt is marked in words,
// markup in the player's name shows as text, and chat logs are withheld (not one line in the
// page's source, with or without ?chat_at=). On the Overview, a join from the banned player's
// IP is marked live. A bad UUID and an unknown player get clear 4xx pages. An admin then sees
// the chat, its hostile line as text, and "jump to a time" shows the chat around that moment;
// a viewer gets 403. Every page is scanned with axe-core.
//
//   BASE_URL=… MODERATOR_LOGIN=… ADMIN_LOGIN=… VIEWER_LOGIN=… PASSWORD=… PLUGIN_KEY=…
//     SERVER_ID=… SUSPECT=… BANNED=… NEWCOMER=… OUTSIDER=… HOME_IP=… HOSTILE_NAME=…
//     HOSTILE_LINE=… CHAT_AT=… \
//     node tests/browser/investigate_page.mjs
//
// tests/pipeline/investigate_page.rs seeds the network and runs this.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  checkInBrowser, env, fail, refusalProblem, run, scanColorSchemes, signIn, signOut, waitFor,
} from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const MODERATOR_LOGIN = env('MODERATOR_LOGIN');
const ADMIN_LOGIN = env('ADMIN_LOGIN');
const VIEWER_LOGIN = env('VIEWER_LOGIN');
const PASSWORD = env('PASSWORD');
const PLUGIN_KEY = env('PLUGIN_KEY');
const SERVER_ID = env('SERVER_ID');
const SUSPECT = env('SUSPECT');
const BANNED = env('BANNED');
const NEWCOMER = env('NEWCOMER');
const OUTSIDER = env('OUTSIDER');
const HOME_IP = env('HOME_IP');
const HOSTILE_NAME = env('HOSTILE_NAME');
const HOSTILE_LINE = env('HOSTILE_LINE');
const CHAT_AT = env('CHAT_AT');
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));
const PLAYER_PATH = `/players/${SUSPECT}`;

/** What each section must show to a moderator: text only the seeded data puts there. */
const SECTIONS = {
  'names-heading': ['Suspect', HOSTILE_NAME],
  'ranks-heading': ['VIP', 'was Member', 'Mia'],
  'sessions-heading': ['Lobby', 'sessions in all'],
  'punishments-heading': ['mute', 'spam', 'appealed', 'Revoked', 'warning', 'language'],
  'flags-heading': ['Reach', 'Fly'],
  'alts-heading': ['Banny', 'Banned'],
  'chat-heading': ['Chat logs are for admins and owners'],
};
/** The same for an admin, who also sees the chat. */
const ADMIN_SECTIONS = { ...SECTIONS, 'chat-heading': ['the latest line', HOSTILE_LINE] };
/** Text of every seeded chat line (the hostile one by a part that survives escaping). */
const CHAT_TEXTS = ['the latest line', 'hello from the past', 'window.__xss', 'pwned-chat'];

const log = (message) => console.log(`investigate: ${message}`);
const failures = [];
const accessibility = [];

async function scan(page, label) {
  accessibility.push(...await scanColorSchemes(page, label, log));
}

/** The text of the section headed by `id`. */
function sectionText(page, id) {
  return page.evaluate((heading) => document.getElementById(heading)?.closest('section')?.innerText ?? null, id);
}

async function checkSections(page, sections) {
  for (const [id, wanted] of Object.entries(sections)) {
    const text = await sectionText(page, id);
    if (text === null) { failures.push(`the page has no section #${id}`); continue; }
    const missing = wanted.filter((w) => !text.includes(w));
    if (missing.length > 0) failures.push(`section #${id} does not show ${missing.join(', ')}: ${text.slice(0, 300)}`);
    else log(`#${id} shows ${wanted.length} seeded facts`);
  }
  const stats = await page.locator('dl.stats').innerText();
  for (const wanted of ['Online', 'VIP', 'discord', 'sus_on_discord']) {
    if (!stats.includes(wanted)) failures.push(`the summary does not show ${wanted}: ${stats}`);
  }
  if (await page.locator('#flags-heading ~ * svg.trend rect').count() === 0) failures.push('the flags have no trend bars');
}

async function checkBannedAlt(page) {
  const warning = page.getByTestId('banned-alt-warning');
  if (await warning.count() !== 1) { failures.push('no banned-alt warning at the top of the page'); return; }
  const text = await warning.innerText();
  if (!text.includes('Banned alt') || !text.includes('Banny')) failures.push(`the banned-alt warning says: ${text}`);
  if (await warning.locator(`a[href="/players/${BANNED}"]`).count() !== 1) failures.push('the warning does not link the banned alt');
  const row = page.getByTestId('alt-row').filter({ hasText: 'Banny' });
  if (!(await row.innerText()).includes('Banned')) failures.push('the banned alt\'s row does not say Banned');
  if ((await page.content()).includes(HOME_IP)) failures.push('the page shows the IP');
  log('the banned alt is marked in words and linked');
}

async function checkEscaping(page) {
  const injected = await page.evaluate(() => ({
    name: document.getElementById('pwned-name') !== null,
    chat: document.getElementById('pwned-chat') !== null,
    script: window.__xss === 1,
  }));
  if (injected.name || injected.chat || injected.script) failures.push(`markup from the pipeline ran: ${JSON.stringify(injected)}`);
  const heading = await page.locator('#player-name').innerText();
  if (heading !== HOSTILE_NAME) failures.push(`the heading shows ${heading}, not the name as text`);
  log('the hostile name shows as text');
}

/** A moderator's page has no chat: no line, no jump form, and no chat text in its source. */
async function checkChatWithheld(page) {
  if (await page.getByTestId('chat-line').count() !== 0) failures.push('a moderator sees chat lines');
  if (await page.locator('#chat-at').count() !== 0) failures.push('a moderator gets the jump-to-a-time form');
  if (await page.getByTestId('chat-withheld').count() !== 1) failures.push('a moderator is not told chat logs are for admins and owners');
  // The source as served (not the DOM): the chat must not be sent at all. ?chat_at= is
  // ignored for a moderator, a malformed one included.
  for (const query of ['', `?chat_at=${encodeURIComponent(CHAT_AT)}`, '?chat_at=yesterday']) {
    const response = await page.goto(`${BASE_URL}${PLAYER_PATH}${query}`);
    const source = await response.text();
    const leaked = CHAT_TEXTS.filter((text) => source.includes(text));
    if (response.status() !== 200 || leaked.length > 0 || !source.includes('data-testid="chat-withheld"')) {
      failures.push(`a moderator's ${PLAYER_PATH}${query} answered ${response.status()} with chat text ${JSON.stringify(leaked)}`);
    }
  }
  log('a moderator gets no chat line, with or without a time to jump to');
}

/** An admin sees the chat, the hostile line as text. */
async function checkChatShown(page) {
  await checkSections(page, ADMIN_SECTIONS);
  const lines = await page.getByTestId('chat-line').allInnerTexts();
  if (!lines.some((line) => line.includes(HOSTILE_LINE))) failures.push(`no chat line shows the hostile line as text: ${lines.join(' | ')}`);
  const injected = await page.evaluate(() => ({
    chat: document.getElementById('pwned-chat') !== null,
    script: window.__xss === 1,
  }));
  if (injected.chat || injected.script) failures.push(`markup from the chat ran: ${JSON.stringify(injected)}`);
  log(`an admin sees ${lines.length} chat lines, the hostile one as text`);
}

async function checkChatJump(page) {
  await page.locator('#chat-at').fill(CHAT_AT);
  await page.getByRole('button', { name: 'Show chat' }).click();
  await waitFor(page, 'the chat around the chosen time shows', () => {
    const moment = document.querySelector('[data-testid="chat-moment"]');
    const lines = [...document.querySelectorAll('[data-testid="chat-line"]')].map((l) => l.innerText);
    return moment && lines.some((l) => l.includes('hello from the past')) ? lines.length : null;
  });
  if (!new URL(page.url()).search.includes('chat_at=')) failures.push(`the jump is not in the address: ${page.url()}`);
  log('jump to a time shows the lines around it');
  await scan(page, `${PLAYER_PATH}?chat_at=…`);
}

async function checkErrors(page) {
  for (const [path, status, words] of [
    ['/players/not-a-uuid', 400, 'Not a player UUID'],
    ['/players/00000000-0000-4000-8000-00000000dead', 404, 'no player'],
    // Another account's player, who joined from the same IP: not this account's to see.
    [`/players/${OUTSIDER}`, 404, 'no player'],
  ]) {
    const response = await page.goto(`${BASE_URL}${path}`);
    const text = await page.locator('main').innerText();
    if (response.status() !== status || !text.includes(words)) failures.push(`${path} answered ${response.status()}: ${text.slice(0, 160)}`);
  }
  log('a bad UUID and an unknown player get 4xx pages');
}

/** An admin's malformed jump is a 400 page (a moderator's is ignored: checkChatWithheld). */
async function checkBadTime(page) {
  const path = `${PLAYER_PATH}?chat_at=yesterday`;
  const response = await page.goto(`${BASE_URL}${path}`);
  const text = await page.locator('main').innerText();
  if (response.status() !== 400 || !text.includes('Not a time')) failures.push(`${path} answered ${response.status()}: ${text.slice(0, 160)}`);
  log('an admin\'s bad time gets a 400 page');
}

async function checkLiveMark(page) {
  await page.goto(`${BASE_URL}/`);
  // The suspect's join, as rendered: marked, and their hostile name shown as text.
  const rendered = await page.evaluate((name) => [...document.querySelectorAll('#activity li')]
    .filter((li) => li.innerText.includes(name) && li.querySelector('[data-testid="banned-alt-mark"]'))
    .length, HOSTILE_NAME);
  if (rendered === 0) failures.push('the suspect\'s join on the rendered Overview is not marked as an alt of a banned player');
  if (await page.evaluate(() => document.getElementById('pwned-name') !== null)) failures.push('the hostile name ran as markup on the Overview');
  await page.evaluate(() => { window.__notReloaded = true; });
  const response = await fetch(`${BASE_URL}/api/plugin/sessions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${PLUGIN_KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      server_id: SERVER_ID, player_uuid: NEWCOMER, player_name: 'Newbie', event: 'join',
      ip: HOME_IP, at: new Date().toISOString(),
    }),
  });
  if (response.status !== 202) fail(`posting a join: ${response.status} ${await response.text()}`);
  const text = await waitFor(page, 'the newcomer\'s join appears marked as an alt of the banned player', (banned) => {
    if (window.__notReloaded !== true) return null;
    const item = [...document.querySelectorAll('#activity li')].find((li) => li.innerText.includes('Newbie'));
    if (!item || !item.querySelector('[data-testid="banned-alt-mark"]')) return null;
    return item.querySelector(`a[href="/players/${banned}"]`) ? item.innerText : null;
  }, BANNED);
  if (!text.includes('alt of banned Banny')) failures.push(`the live join says: ${text}`);
  log(`live feed: "${text.trim()}"`);
  await scan(page, '/ (a marked live join)');
}

async function checkAdmin(page) {
  await signOut(page);
  await signIn(page, BASE_URL, ADMIN_LOGIN, PASSWORD, PLAYER_PATH);
  if (new URL(page.url()).pathname !== PLAYER_PATH) fail(`the admin landed on ${page.url()}`);
  await checkChatShown(page);
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'investigate-admin.png'), fullPage: true });
  await scan(page, `${PLAYER_PATH} (admin)`);
  await checkBadTime(page);
  await page.goto(`${BASE_URL}${PLAYER_PATH}`);
  await checkChatJump(page);
}

async function checkViewer(page) {
  await signOut(page);
  await signIn(page, BASE_URL, VIEWER_LOGIN, PASSWORD);
  const refused = await refusalProblem(page, BASE_URL, PLAYER_PATH, { role: 'Viewer' });
  if (refused) failures.push(refused);
  log('a viewer gets 403');
}

async function main() {
  const allowStatus = (r) => [400, 403, 404].includes(r.status());
  await checkInBrowser({ failures, allowStatus, screenshotDir: SCREENSHOT_DIR }, async (page) => {
    await signIn(page, BASE_URL, MODERATOR_LOGIN, PASSWORD, PLAYER_PATH);
    if (new URL(page.url()).pathname !== PLAYER_PATH) fail(`the moderator landed on ${page.url()}`);
    await checkSections(page, SECTIONS);
    await checkBannedAlt(page);
    await checkEscaping(page);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'investigate.png'), fullPage: true });
    await scan(page, PLAYER_PATH);
    await checkChatWithheld(page);
    await checkErrors(page);
    await checkLiveMark(page);
    await checkAdmin(page);
    await checkViewer(page);
    if (accessibility.length > 0) failures.push(`accessibility: ${accessibility.join(' | ')}`);
  });
}

run('investigate', 180_000, main);
