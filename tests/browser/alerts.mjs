// Browser test of the Alerts pages: Debian's headless Chromium, driven by playwright-core, signs
// in as an admin and, through the pages only: is refused a private address, adds a webhook
// destination pointing at the test receiver (the signing secret is shown once, and handed to
// the receiver so it verifies signatures), adds a rule, sends a test event and sees it in the
// delivery log (delivered when EXPECT_DELIVERED=1), sends it again, rotates the secret, and
// disables and enables the destination (a banner on /alerts and on the Overview meanwhile).
// axe-core on both pages. Then a moderator: no link, and /alerts answers 403.
//
//   BASE_URL=… ADMIN_LOGIN=… MODERATOR_LOGIN=… PASSWORD=… RECEIVER_URL=… RECEIVER_CONTROL=… \
//     EXPECT_DELIVERED=1 node tests/browser/alerts.mjs
//
// tests/pipeline/alerts_page.rs starts the stack and the receiver and runs this, then checks
// what the receiver got. CHROMIUM_BIN (default /usr/bin/chromium), SCREENSHOT_DIR (default
// <repo>/target/browser). Exits 0 when every check passed, 1 with the failures otherwise.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  WAIT_MS, checkInBrowser, env, navLinks, refusalProblems, run, scanColorSchemes, signIn,
} from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const ADMIN_LOGIN = env('ADMIN_LOGIN');
const MODERATOR_LOGIN = env('MODERATOR_LOGIN');
const PASSWORD = env('PASSWORD');
const RECEIVER_URL = env('RECEIVER_URL');
const RECEIVER_CONTROL = env('RECEIVER_CONTROL');
const EXPECT_DELIVERED = env('EXPECT_DELIVERED', '0') === '1';
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));

const log = (message) => console.log(`alerts: ${message}`);
const failures = [];

async function scan(page, label) {
  for (const problem of await scanColorSchemes(page, label, log)) failures.push(`axe on ${problem}`);
}

const mainText = async (page) => (await page.locator('main').textContent()) ?? '';

/**
 * Submits the form whose button is `button` and waits until its answer is shown (htmx boosts
 * the form: the answer replaces the page without a navigation).
 */
async function submit(page, button) {
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST', { timeout: WAIT_MS }),
    page.getByRole('button', { name: button, exact: true }).first().click(),
  ]);
  await page.waitForFunction(() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling'),
    null, { timeout: WAIT_MS });
  await page.waitForLoadState('networkidle');
}

/** Calls `check` every 250 ms until it is true; false after `ms`. */
async function poll(check, ms = 20_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((done) => { setTimeout(done, 250); });
  }
  return false;
}

/** The delivery log's rows: event, status, webhook-id. */
const logRows = (page) => page.$$eval('#delivery-log tbody tr', (trs) => trs.map((tr) => {
  const cells = [...tr.children].map((td) => td.textContent.trim());
  return { event: cells[1], status: cells[2], webhookId: cells[6] };
}));

async function addDestination(page) {
  await signIn(page, BASE_URL, ADMIN_LOGIN, PASSWORD, '/alerts');
  const links = await navLinks(page);
  if (!links.includes('/alerts')) failures.push(`an admin's bar lacks /alerts: ${links.join(' ')}`);
  await scan(page, '/alerts (empty)');

  // A private address is refused, with the reason on the page. Checked without JavaScript
  // (htmx blocked, in a second tab): the plain form works, and the expected 422 is a page,
  // not an htmx error in the watched tab's console.
  const plain = await page.context().newPage();
  await plain.route('**/assets/htmx*', (route) => route.abort());
  await plain.goto(`${BASE_URL}/alerts`);
  await plain.locator('form[action="/alerts/destinations"] input[name="url"]').fill('http://10.0.0.1/hook');
  const [answer] = await Promise.all([
    plain.waitForResponse((r) => r.request().method() === 'POST', { timeout: WAIT_MS }),
    plain.getByRole('button', { name: 'Add destination' }).click(),
  ]);
  await plain.waitForLoadState('load');
  const refused = await plain.locator('.error[role="alert"]').textContent().catch(() => '');
  if (answer.status() !== 422 || !/refused/.test(refused ?? '')) {
    failures.push(`a private address answered ${answer.status()}: ${refused}`);
  } else {
    log('without JavaScript, a private address is refused with a message (422)');
  }
  await plain.close();

  const url = page.locator('form[action="/alerts/destinations"] input[name="url"]');

  await page.getByLabel('Kind').selectOption('webhook');
  await url.fill(RECEIVER_URL);
  await page.locator('form[action="/alerts/destinations"] input[name="name"]').fill('Receiver');
  await submit(page, 'Add destination');
  const secret = ((await page.locator('#new-secret').textContent().catch(() => '')) ?? '').trim();
  if (!secret.startsWith('whsec_')) {
    failures.push(`no signing secret shown after adding: ${(await mainText(page)).slice(0, 200)}`);
    return null;
  }
  log('the signing secret is shown');
  await fetch(`${RECEIVER_CONTROL}/config`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ secrets: [secret] }),
  });
  await page.goto(`${BASE_URL}/alerts`);
  if ((await page.content()).includes(secret)) failures.push('the secret is shown again on /alerts');
  else log('the secret is not shown again');
  return secret;
}

async function addRule(page) {
  await page.goto(`${BASE_URL}/alerts`);
  await page.getByLabel('When').selectOption('punishment_issued');
  await page.locator('form[action="/alerts/rules"] input[name="name"]').fill('Bans');
  await page.getByRole('checkbox', { name: 'Receiver' }).check();
  await page.getByRole('checkbox', { name: 'ban', exact: true }).check();
  await submit(page, 'Add rule');
  const text = await mainText(page);
  if (!text.includes('Rule created') || !text.includes('Bans') || !text.includes('punishment_types: ["ban"]')) {
    failures.push(`the rule was not added: ${text.slice(0, 300)}`);
  } else {
    log('a rule is added');
  }
  await scan(page, '/alerts');
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'alerts.png'), fullPage: true });
}

/** Edits the rule (the form filled from it), pauses and resumes it. */
async function editPauseResume(page) {
  await page.goto(`${BASE_URL}/alerts`);
  await page.getByRole('link', { name: 'Edit rule Bans', exact: true }).click();
  await page.waitForURL((url) => url.pathname.endsWith('/edit'), { timeout: WAIT_MS });
  const name = page.locator('input[name="name"]');
  const filled = (await name.inputValue()) === 'Bans'
    && (await page.getByRole('checkbox', { name: 'ban', exact: true }).isChecked())
    && !(await page.getByRole('checkbox', { name: 'mute', exact: true }).isChecked());
  if (!filled) failures.push('the edit form is not filled from the rule');
  await scan(page, '/alerts/rules/{id}/edit');
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'alert_rule_edit.png'), fullPage: true });
  await name.fill('Bans and mutes');
  await page.getByRole('checkbox', { name: 'mute', exact: true }).check();
  await submit(page, 'Save rule');
  let text = await mainText(page);
  if (!text.includes('Rule saved') || !text.includes('punishment_types: ["ban","mute"]')) {
    failures.push(`the edit was not saved: ${text.slice(0, 300)}`);
  }
  await submit(page, 'Pause rule Bans and mutes');
  text = await mainText(page);
  if (!text.includes('Rule paused') || !(await page.getByRole('button', { name: 'Resume rule Bans and mutes' }).count())) {
    failures.push(`the rule was not paused: ${text.slice(0, 300)}`);
  }
  await submit(page, 'Resume rule Bans and mutes');
  text = await mainText(page);
  if (!text.includes('Rule resumed') || !(await page.getByRole('button', { name: 'Pause rule Bans and mutes' }).count())) {
    failures.push(`the rule was not resumed: ${text.slice(0, 300)}`);
  } else {
    log('a rule is edited, paused and resumed');
  }
}

async function testEvent(page) {
  await page.getByRole('link', { name: 'Receiver' }).first().click();
  await page.waitForURL((url) => url.pathname.startsWith('/alerts/destinations/'), { timeout: 15_000 });
  const path = new URL(page.url()).pathname;
  await submit(page, 'Send a test event');
  const wanted = EXPECT_DELIVERED ? 'delivered' : null;
  const seen = await poll(async () => {
    await page.goto(`${BASE_URL}${path}`);
    const rows = await logRows(page);
    return rows.length === 1 && rows[0].event === 'test' && (!wanted || rows[0].status === wanted);
  });
  if (seen) log(`the test event is in the log${wanted ? ', delivered' : ''}`);
  else failures.push(`the test event is not in the log${wanted ? ' as delivered' : ''}: ${JSON.stringify(await logRows(page))}`);
  const [first] = await logRows(page);

  await submit(page, 'Send again');
  if (!(await mainText(page)).includes('queued again')) failures.push('"send again" said nothing');
  const again = await logRows(page);
  if (again.length !== 1 || again[0].webhookId !== first?.webhookId) {
    failures.push(`after "send again" the log reads ${JSON.stringify(again)}`);
  } else {
    log('"send again" keeps the same webhook-id');
  }
  await scan(page, '/alerts/destinations/{id}');
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'alert_destination.png'), fullPage: true });
  return path;
}

async function rotateAndDisable(page, path, secret) {
  await submit(page, 'Rotate signing secret');
  const rotated = ((await page.locator('#new-secret').textContent().catch(() => '')) ?? '').trim();
  if (!rotated.startsWith('whsec_') || rotated === secret) failures.push(`rotation showed ${rotated}`);
  else log('rotation shows a new secret once');
  await fetch(`${RECEIVER_CONTROL}/config`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ secrets: [rotated, secret] }),
  });

  await page.goto(`${BASE_URL}${path}`);
  await submit(page, 'Disable');
  for (const where of ['/alerts', '/']) {
    await page.goto(`${BASE_URL}${where}`);
    const banner = await page.locator('main p.error', { hasText: 'is disabled' }).count();
    if (banner !== 1) failures.push(`no banner for the disabled destination on ${where}`);
  }
  log('a disabled destination is announced on /alerts and the Overview');
  await page.goto(`${BASE_URL}${path}`);
  await submit(page, 'Enable');
  await page.goto(`${BASE_URL}/`);
  if (await page.locator('main p.error', { hasText: 'is disabled' }).count() !== 0) {
    failures.push('the banner stays after enabling');
  }
}

async function checkModerator(page) {
  const refused = await refusalProblems(page, BASE_URL, {
    login: MODERATOR_LOGIN, password: PASSWORD, role: 'Moderator', link: '/alerts', path: '/alerts',
  });
  failures.push(...refused);
  if (refused.length === 0) log('moderator: no link, 403');
}

async function main() {
  // The refused private address (422) and the moderator's 403 are expected.
  const allowStatus = (r) => [403, 422].includes(r.status());
  await checkInBrowser({ failures, allowStatus, screenshotDir: SCREENSHOT_DIR }, async (page) => {
    const secret = await addDestination(page);
    if (!secret) return;
    await addRule(page);
    await editPauseResume(page);
    const path = await testEvent(page);
    await rotateAndDisable(page, path, secret);
    await checkModerator(page);
  });
}

run('alerts', 180_000, main);
