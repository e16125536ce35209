// Browser test of the public appeal form: Debian's headless Chromium, driven by playwright-core,
// opens a ban's appeal link with no sign-in, finds the punishment and the form (labelled, the
// honeypot out of sight and out of the tab order), sends an appeal (a plain form post, no
// script needed) and sees its status "new" with the words it sent at the same link. The form
// page and the status page are scanned with axe-core at 390 px and at 1280 px, light and dark.
//
//   BASE_URL=… APPEAL_PATH=/appeal/<token> node tests/browser/appeal_page.mjs
//
// tests/pipeline/appeal_browser.rs seeds the ban, signs the link and runs this.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkInBrowser, env, run, scanColorSchemes } from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const APPEAL_PATH = env('APPEAL_PATH');
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));
const MESSAGE = 'I was not using x-ray <b>at all</b>: my clip shows the whole session.';
const WIDTHS = [390, 1280];

const log = (message) => console.log(`appeal: ${message}`);
const failures = [];

/** Scans the page at each width, light and dark; screenshots each width as `name-<width>.png`. */
async function scanWidths(page, label, name) {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    failures.push(...await scanColorSchemes(page, `${label} at ${width} px`, log));
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    if (overflow) failures.push(`${label} scrolls sideways at ${width} px`);
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${width}.png`), fullPage: true });
  }
}

async function formPage(page) {
  const response = await page.goto(`${BASE_URL}${APPEAL_PATH}`);
  if (response.status() !== 200) failures.push(`the appeal link answered ${response.status()}`);
  const facts = await page.getByTestId('appealed-punishment').innerText();
  for (const wanted of ['Ban', 'x-ray <b>mining</b>', 'In force']) {
    if (!facts.includes(wanted)) failures.push(`the punishment does not show ${wanted}: ${facts}`);
  }
  if (await page.locator('nav[aria-label="Dashboard"]').count() !== 0) failures.push('the appeal page shows the dashboard bar');
  const honeypot = page.locator('input[name="website"]');
  if (await honeypot.isVisible() && (await honeypot.boundingBox())?.x >= 0) failures.push('the honeypot is on screen');
  await page.keyboard.press('Tab');
  const focused = await page.evaluate(() => document.activeElement?.getAttribute('name'));
  if (focused !== 'message') failures.push(`the first Tab stop is ${focused}, not the message`);
  await scanWidths(page, 'the appeal form', 'appeal-form');
  log('the link shows the ban and the form');
}

async function send(page) {
  await page.getByLabel('Why should staff lift or reconsider it?').fill(MESSAGE);
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Send appeal' }).click()]);
  if (new URL(page.url()).pathname !== APPEAL_PATH) failures.push(`after sending, the page is ${page.url()}`);
  const status = await page.locator('[data-appeal-status]').getAttribute('data-appeal-status').catch(() => null);
  if (status !== 'new') failures.push(`the appeal's status reads ${status}`);
  const sent = await page.getByTestId('appeal-message').innerText().catch(() => '');
  if (sent.trim() !== MESSAGE) failures.push(`the page shows the appeal as ${sent}`);
  if (await page.getByTestId('appeal-form').count() !== 0) failures.push('the form is still offered');
  await scanWidths(page, 'the appeal status', 'appeal-status');
  log('the sent appeal shows as new at the same link');
}

run('appeal', 180_000, () => checkInBrowser({ failures, screenshotDir: SCREENSHOT_DIR }, async (page) => {
  await formPage(page);
  await send(page);
}));
