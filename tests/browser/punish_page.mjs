// Browser test of punishing from the dashboard: Debian's headless Chromium, driven by
// playwright-core, signs in as a moderator, opens a player's Investigate page, bans them for
// 7 days with the Punish form (no script needed: a plain form post), sees the ban among the
// player's punishments "on the dashboard" and on the Punishments page with the server
// "Dashboard", tries a permanent ban and is told only an admin can, then revokes the ban from
// its form and sees it revoked. The page is scanned with axe-core in light and dark.
//
//   BASE_URL=… MODERATOR_LOGIN=… PASSWORD=… PLAYER=… node tests/browser/punish_page.mjs
//
// tests/pipeline/punish_browser.rs seeds the player and runs this.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdirSync } from 'node:fs';
import { env, fail, launch, run, scanColorSchemes, signIn, waitFor, watchProblems } from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const MODERATOR_LOGIN = env('MODERATOR_LOGIN');
const PASSWORD = env('PASSWORD');
const PLAYER = env('PLAYER');
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));
const PLAYER_PATH = `/players/${PLAYER}`;
const REASON = 'x-ray <b>mining</b> in the nether';

const log = (message) => console.log(`punish: ${message}`);
const failures = [];
const accessibility = [];

/** The text of the player's punishments section. */
function punishmentsText(page) {
  return page.evaluate(() => document.getElementById('punishments-heading')?.closest('section')?.innerText ?? '');
}

async function ban(page) {
  const form = page.getByTestId('punish-form');
  await form.getByLabel('Type').selectOption('ban');
  await form.getByLabel('Length (bans and mutes)').selectOption('7d');
  await form.getByLabel('Reason (shown to the player)').fill(REASON);
  await Promise.all([page.waitForNavigation(), form.getByRole('button', { name: 'Punish' }).click()]);
  if (new URL(page.url()).pathname !== PLAYER_PATH) failures.push(`after the ban the page is ${page.url()}`);
  const text = await waitFor(page, 'the ban is among the punishments', (reason) => {
    const section = document.getElementById('punishments-heading')?.closest('section');
    return section && section.innerText.includes(reason) ? section.innerText : null;
  }, REASON);
  for (const wanted of ['ban', 'Mia Moderator', 'on the dashboard', 'Active']) {
    if (!text.includes(wanted)) failures.push(`the punishments section does not show ${wanted}: ${text.slice(0, 300)}`);
  }
  if (await page.evaluate(() => document.querySelector('#punishments-heading ~ * b') !== null)) {
    failures.push('the reason ran as markup');
  }
  if (await page.getByTestId('revocable').count() !== 1) failures.push('the Punish section offers no revoke for the ban');
  log('a 7-day ban issued from the form shows among the punishments');
}

async function permanentRefused(page) {
  const form = page.getByTestId('punish-form');
  await form.getByLabel('Type').selectOption('ban');
  await form.getByLabel('Length (bans and mutes)').selectOption('permanent');
  await form.getByLabel('Reason (shown to the player)').fill('for good');
  const answered = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(`${PLAYER_PATH}/punishments`));
  await form.getByRole('button', { name: 'Punish' }).click();
  const status = (await answered).status();
  await page.waitForLoadState();
  const text = await page.locator('main').innerText();
  if (status !== 403 || !text.includes('Not allowed for your role') || !text.includes('at most 30 days')) {
    failures.push(`a moderator's permanent ban answered ${status}: ${text.slice(0, 200)}`);
  }
  log('a moderator\'s permanent ban is refused with the reason');
}

async function logPage(page) {
  await page.goto(`${BASE_URL}/punishments`);
  const row = page.getByTestId('punishment-row').filter({ hasText: 'in the nether' });
  if (await row.count() !== 1) { failures.push('the Punishments page does not list the ban'); return; }
  const text = await row.innerText();
  if (!text.includes('Dashboard')) failures.push(`the Punishments row does not say Dashboard: ${text}`);
  if (await row.getByTestId('revoke-form').count() !== 1) failures.push('the Punishments row offers no revoke');
  log('the Punishments page lists the ban from the Dashboard with a revoke form');
}

async function revoke(page) {
  await page.goto(`${BASE_URL}${PLAYER_PATH}`);
  const item = page.getByTestId('revocable');
  await item.getByLabel('Reason').fill('appeal accepted');
  await Promise.all([page.waitForNavigation(), item.getByRole('button', { name: 'Revoke' }).click()]);
  const text = await waitFor(page, 'the ban shows revoked', () => {
    const section = document.getElementById('punishments-heading')?.closest('section');
    return section && section.innerText.includes('appeal accepted') ? section.innerText : null;
  });
  if (!text.includes('Revoked')) failures.push(`the revoked ban does not say Revoked: ${text.slice(0, 300)}`);
  if (await page.getByTestId('revocable').count() !== 0) failures.push('the revoked ban is still offered for revoking');
  log('the revoke form lifts the ban');
}

run('punish', 120_000, async () => {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // bypassCSP lets the test add axe-core; the pages' own policy is checked by the API tests.
  const browser = await launch({ bypassCSP: true });
  try {
    const { context } = browser;
    const page = context.pages()[0] ?? await context.newPage();
    const problems = [];
    // The moderator's refused permanent ban is a 403 page by design.
    const refused = `${PLAYER_PATH}/punishments`;
    watchProblems(page, problems, { allowStatus: (r) => r.status() === 403 && r.url().endsWith(refused) });
    await signIn(page, BASE_URL, MODERATOR_LOGIN, PASSWORD, PLAYER_PATH);
    accessibility.push(...await scanColorSchemes(page, `${PLAYER_PATH} (Punish section)`, log));
    await ban(page);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'punish.png'), fullPage: true });
    await permanentRefused(page);
    await logPage(page);
    await revoke(page);
    failures.push(...accessibility);
    // htmx logs every error answer it swaps in; the refused ban's 403 page is one by design.
    failures.push(...problems.filter((p) => !p.includes(`Response Status Error Code 403 from ${refused}`)));
    if (failures.length > 0) fail(`\n  - ${failures.join('\n  - ')}`);
  } finally {
    await browser.close();
  }
});
