// Browser test of the "Data retention" section of /settings: Debian's headless
// Chromium, driven by playwright-core, signs in as an owner, sees every kind kept forever, sets
// chat to 30 days and keeps the custom-event property `item` in clear, saves, reads what
// changed, and axe-core finds nothing serious; after a reload the values are still shown. A
// word for days is refused with a message and changes nothing.
//
//   BASE_URL=… OWNER_LOGIN=… PASSWORD=… node tests/browser/privacy_settings.mjs
//
// tests/pipeline/privacy_pages.rs starts the stack, runs this, then reads the policy back
// through the admin API. CHROMIUM_BIN (default /usr/bin/chromium), SCREENSHOT_DIR (default
// <repo>/target/browser). Exits 0 when every check passed, 1 with the failures otherwise.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdirSync } from 'node:fs';
import {
  WAIT_MS, env, fail, launch, run, scanColorSchemes, signIn, watchProblems,
} from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const OWNER_LOGIN = env('OWNER_LOGIN');
const PASSWORD = env('PASSWORD');
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));

const log = (message) => console.log(`privacy_settings: ${message}`);
const failures = [];

const KINDS = ['chat', 'ip_hashes', 'sessions', 'custom_events', 'anticheat_flags'];
const form = (page) => page.locator('#privacy-form');
const properties = (page) => form(page).getByLabel(/Custom-event properties kept in clear/);

/** The days shown per kind, as the inputs hold them ("" is forever). */
const shown = (page) => page.$$eval('#privacy-form input[type="number"]',
  (inputs) => Object.fromEntries(inputs.map((input) => [input.name, input.value])));

async function scan(page, label) {
  for (const problem of await scanColorSchemes(page, label, log)) failures.push(`axe on ${problem}`);
}

/** Submits the section's form and waits for the page answering it. */
async function save(page) {
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/settings/privacy'), { timeout: WAIT_MS }),
    form(page).getByRole('button', { name: 'Save data retention' }).click(),
  ]);
  await page.waitForLoadState();
  return answer;
}

async function checks(page) {
  await signIn(page, BASE_URL, OWNER_LOGIN, PASSWORD, '/settings');
  const before = await shown(page);
  if (JSON.stringify(Object.keys(before)) !== JSON.stringify(KINDS) || Object.values(before).some((v) => v !== '')) {
    failures.push(`a new account's retention reads ${JSON.stringify(before)}, expected every kind forever`);
  }

  // Chat 30 days (typed into the field its label names) and one property kept in clear.
  await form(page).getByLabel('Chat messages and commands', { exact: true }).fill('30');
  await properties(page).fill('item');
  let answer = await save(page);
  const status = page.locator('#privacy-form').locator('xpath=preceding-sibling::div[contains(@class,"notice")][1]');
  await status.waitFor({ timeout: WAIT_MS }).catch(() => {});
  const notice = (await status.textContent().catch(() => '')).replace(/\s+/g, ' ').trim();
  if (answer.status() !== 200 || !notice.includes('Chat messages and commands: forever → 30 days')
    || !notice.includes('Custom-event properties kept in clear') || !notice.includes('item')) {
    failures.push(`saving answered ${answer.status()} with ${JSON.stringify(notice)}`);
  } else {
    log(`saved: ${notice}`);
  }
  await scan(page, '/settings (data retention saved)');
  await page.locator('#retention').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'settings-privacy.png'), fullPage: true });

  // A reload shows what was saved.
  await page.goto(`${BASE_URL}/settings`);
  const after = await shown(page);
  const kept = await properties(page).inputValue();
  if (after.chat !== '30' || KINDS.slice(1).some((kind) => after[kind] !== '') || kept !== 'item') {
    failures.push(`after a reload the section reads ${JSON.stringify(after)} and ${JSON.stringify(kept)}`);
  } else {
    log('after a reload: chat 30 days, item kept in clear');
  }
  await scan(page, '/settings');

  // A word for days (the number input's own check taken away) is refused with a message.
  const sessions = form(page).getByLabel('Sessions (joins and quits)', { exact: true });
  await sessions.evaluate((input) => { input.type = 'text'; });
  await sessions.fill('ninety');
  answer = await save(page);
  await page.locator('.error[role="alert"]').waitFor({ timeout: WAIT_MS }).catch(() => {});
  const error = await page.locator('.error[role="alert"]').textContent().catch(() => '');
  if (answer.status() !== 422 || !error.includes('Sessions (joins and quits)')) {
    failures.push(`a word for days answered ${answer.status()}: ${error}`);
  } else {
    log(`a word for days: 422, ${error.trim()}`);
  }
  await scan(page, '/settings (refused)');
  await page.goto(`${BASE_URL}/settings`);
  const unchanged = await shown(page);
  if (unchanged.chat !== '30' || unchanged.sessions !== '') failures.push(`the refused save changed ${JSON.stringify(unchanged)}`);
}

async function main() {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // bypassCSP lets the test add axe-core; the pages' own policy is checked by the API tests.
  const browser = await launch({ bypassCSP: true });
  try {
    const { context } = browser;
    const page = context.pages()[0] ?? await context.newPage();
    const problems = [];
    watchProblems(page, problems, { allowStatus: (r) => r.status() === 422 });
    await checks(page);
    // htmx logs every error answer it swaps in; the refused save's 422 page is one by design.
    failures.push(...problems.filter((p) => !p.includes('Response Status Error Code 422 from /settings/privacy')));
    if (failures.length > 0) fail(`\n  - ${failures.join('\n  - ')}`);
  } finally {
    await browser.close();
  }
}

run('privacy_settings', 150_000, main);
