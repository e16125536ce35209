// Browser test of the appeals inbox: Debian's headless Chromium, driven by playwright-core,
// signs in as a moderator, finds "Appeals" in the bar with the count of new appeals, opens the
// inbox and the appeal at 390 px and on a desktop, light and dark, scanning each with axe-core
// and checking nothing scrolls sideways, then accepts the appeal with a reply from its page (a
// plain form post) and sees it accepted and its ban revoked.
//
//   BASE_URL=… MODERATOR_LOGIN=… PASSWORD=… APPEAL=… node tests/browser/appeals_inbox.mjs
//
// tests/pipeline/appeals_browser.rs seeds the ban and the appeal and runs this.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdirSync } from 'node:fs';
import { env, fail, launch, run, scanColorSchemes, signIn, waitFor, watchProblems } from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const MODERATOR_LOGIN = env('MODERATOR_LOGIN');
const PASSWORD = env('PASSWORD');
const APPEAL = env('APPEAL');
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));
const APPEAL_PATH = `/appeals/${APPEAL}`;
const REPLY = 'The clip shows lag, welcome back.';

const log = (message) => console.log(`appeals: ${message}`);
const failures = [];

const SIZES = [['390 px', { width: 390, height: 844 }], ['desktop', { width: 1280, height: 900 }]];

/** Scans the page at each size, light and dark, and checks it does not scroll sideways. */
async function scanSizes(page, label) {
  for (const [size, viewport] of SIZES) {
    await page.setViewportSize(viewport);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    if (overflow > 1) failures.push(`${label} at ${size} scrolls sideways by ${overflow} px`);
    failures.push(...await scanColorSchemes(page, `${label} at ${size}`, log));
  }
  await page.setViewportSize(SIZES[1][1]);
}

async function inbox(page) {
  const badge = await waitFor(page, 'the Appeals link shows its badge', () => {
    const badge = document.querySelector('nav[aria-label="Dashboard"] a[href="/appeals"] [data-testid="appeals-badge"]');
    return badge ? badge.textContent : null;
  });
  if (!badge.startsWith('1')) failures.push(`the Appeals badge says ${badge}`);
  await page.goto(`${BASE_URL}/appeals`);
  const rows = page.getByTestId('appeal-row');
  if (await rows.count() !== 1) failures.push(`the inbox lists ${await rows.count()} appeals`);
  const text = await rows.first().innerText();
  for (const wanted of ['Appealer', 'ban', 'fly hacks', 'I was lagging', 'New']) {
    if (!text.includes(wanted)) failures.push(`the inbox row does not show ${wanted}: ${text}`);
  }
  await scanSizes(page, '/appeals');
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'appeals.png'), fullPage: true });
  log('the inbox lists the new appeal');
}

async function accept(page) {
  await page.getByRole('link', { name: 'Open the appeal of Appealer' }).click();
  await page.waitForURL((url) => url.pathname === APPEAL_PATH);
  await waitFor(page, 'the appeal page', () => document.querySelector('[data-appeal-status="new"]') !== null);
  await scanSizes(page, APPEAL_PATH);
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'appeal.png'), fullPage: true });
  const form = page.getByTestId('decision-form');
  await form.getByLabel('Reply (the player sees it at their appeal link)').fill(REPLY);
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith(`${APPEAL_PATH}/decision`)),
    form.getByRole('button', { name: 'Accept and lift the punishment' }).click(),
  ]);
  const state = await waitFor(page, 'the appeal shows accepted', () => {
    const status = document.querySelector('[data-appeal-status="accepted"]');
    const punishment = document.querySelector('[data-testid="punishment-state"]');
    return status && punishment ? punishment.textContent.trim() : null;
  });
  if (state !== 'Revoked') failures.push(`the accepted appeal's ban is ${state}`);
  const reply = await page.getByTestId('appeal-reply').innerText();
  if (reply !== REPLY) failures.push(`the reply shown is ${reply}`);
  if (await page.getByTestId('decision-form').count() !== 0) failures.push('a decided appeal still offers the form');
  log('accepting from the appeal page lifts the ban');
}

run('appeals', 150_000, async () => {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // bypassCSP lets the test add axe-core; the pages' own policy is checked by the API tests.
  const browser = await launch({ bypassCSP: true });
  try {
    const { context } = browser;
    const page = context.pages()[0] ?? await context.newPage();
    const problems = [];
    watchProblems(page, problems);
    await signIn(page, BASE_URL, MODERATOR_LOGIN, PASSWORD, '/');
    await inbox(page);
    await accept(page);
    failures.push(...problems);
    if (failures.length > 0) fail(`\n  - ${failures.join('\n  - ')}`);
  } finally {
    await browser.close();
  }
});
