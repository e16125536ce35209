// Browser test of the Chat logs page (/chat): Debian's headless Chromium, driven by
// playwright-core, signs in as an admin on a stack whose chat came through ingest, filters by
// keyword, server, type and player (by name and by UUID), pages (htmx and a plain link),
// opens the staff-commands view, downloads the CSV of a filter and checks its rows are the
// page's, sees hostile lines shown as text and neutralised in the CSV, refused filters
// explained, the export in the audit log, and scans with axe-core; then a moderator sees no
// "Chat logs" link and gets 403 on the page, its rows and its export.
//
//   BASE_URL=… ADMIN_LOGIN=… MODERATOR_LOGIN=… PASSWORD=… ALICE_UUID=… MIA_UUID=… \
//     HACKER_UUID=… HOSTILE_NAME=… SURVIVAL_ID=… node tests/browser/chat_page.mjs
//
// tests/pipeline/chat_page.rs seeds the network and runs this. Exits 0 when every check
// passed, 1 with the failures otherwise.

import { readFileSync } from 'node:fs';
import {
  accessibilityProblems, env, fail, launch, navLinks, refusalProblem, run, signIn, signOut, waitFor,
  watchProblems,
} from './lib.mjs';

const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const ADMIN_LOGIN = env('ADMIN_LOGIN');
const MODERATOR_LOGIN = env('MODERATOR_LOGIN');
const PASSWORD = env('PASSWORD');
const ALICE_UUID = env('ALICE_UUID');
const MIA_UUID = env('MIA_UUID');
const HACKER_UUID = env('HACKER_UUID');
const HOSTILE_NAME = env('HOSTILE_NAME');
const SURVIVAL_ID = env('SURVIVAL_ID');
const SCRIPT_LINE = '<script>window.pwned=1</script><img src=x onerror="window.pwned=2">';
const FORMULA_LINE = '=HYPERLINK("http://evil.example","click me")';
const CSV_HEADER = 'sent_at,server_id,server_name,player_uuid,player_name,entry_type,channel,message,id';

const log = (message) => console.log(`chat_page: ${message}`);
const accessibility = [];

async function scan(page, label) {
  const found = await accessibilityProblems(page);
  for (const problem of found) accessibility.push(`${label}: ${problem}`);
  log(`axe on ${label}: ${found.length} serious or critical`);
}

/** RFC 4180: records of fields, quoted fields may hold commas, quotes ("") and line breaks. */
function parseCsv(text) {
  const records = [];
  let record = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i += 1; } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') { record.push(field); field = ''; } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field); records.push(record); record = []; field = ''; i += 1;
    } else field += c;
  }
  if (field !== '' || record.length > 0) fail(`the CSV does not end with CRLF: ${JSON.stringify(text.slice(-80))}`);
  return records;
}

/** The table's rows as the page shows them. */
function rows(page) {
  return page.$$eval('[data-testid="chat-row"]', (trs) => trs.map((tr) => ({
    id: tr.dataset.id,
    server: tr.cells[1].textContent.trim(),
    player: tr.cells[2].textContent.trim(),
    href: tr.cells[2].querySelector('a')?.getAttribute('href'),
    channel: tr.cells[3].textContent.trim(),
    kind: tr.cells[4].textContent.trim(),
    message: tr.cells[5].textContent,
  })));
}

/** Fills the filter form (every field, empty unless given) and applies it. */
async function filter(page, { server = '', player = '', type = '', q = '' } = {}, expectStatus = 200) {
  await page.locator('#filter-server').selectOption(server);
  await page.locator('#filter-player').fill(player);
  if (await page.locator('#filter-type').count() > 0) await page.locator('#filter-type').selectOption(type);
  await page.locator('#filter-q').fill(q);
  // The list being replaced is marked: the wait below is for the new one.
  await page.evaluate(() => { document.getElementById('feed').dataset.stale = 'true'; });
  const [response] = await Promise.all([
    page.waitForResponse((r) => new URL(r.url()).pathname === '/chat' && r.request().method() === 'GET'),
    page.locator('#apply').click(),
  ]);
  if (response.status() !== expectStatus) fail(`filter ${JSON.stringify({ server, player, type, q })} answered ${response.status()}`);
  await waitFor(page, 'the filtered list is shown', () => {
    const feed = document.getElementById('feed');
    return feed !== null && feed.dataset.stale === undefined;
  });
  return rows(page);
}

/** Downloads the page's CSV link; returns its records (header checked and removed). */
async function downloadCsv(page) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#export').click()]);
  const name = download.suggestedFilename();
  if (!/^chat-\d{8}T\d{6}Z\.csv$/.test(name)) fail(`the CSV's file name is ${name}`);
  const text = readFileSync(await download.path(), 'utf8');
  const records = parseCsv(text);
  if (records[0]?.join(',') !== CSV_HEADER) fail(`the CSV's header is ${records[0]}`);
  return records.slice(1).map(([sentAt, serverId, serverName, player, playerName, kind, channel, message, id]) => ({
    sentAt, serverId, serverName, player, playerName, kind, channel, message, id,
  }));
}

function same(what, actual, expected) {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  if (a !== e) fail(`${what}: got ${a}, expected ${e}`);
}

async function checkFilters(page) {
  const all = await rows(page);
  same('the newest page holds 50 lines', all.length, 50);
  await scan(page, '/chat');

  const hello = await filter(page, { q: 'HELLO' });
  same('keyword "HELLO" (case-insensitive)', hello.map((r) => r.message), ['hello from bob', 'hello everyone']);

  const survival = await filter(page, { server: SURVIVAL_ID, type: 'chat' });
  if (survival.length !== 50 || survival.some((r) => r.server !== 'Survival' || r.kind !== 'chat')) {
    fail(`server Survival + chat: ${JSON.stringify(survival.slice(0, 3))} (${survival.length} rows)`);
  }
  same('the newest Survival chat line', survival[0].message, 'diamonds over here');

  const home = await filter(page, { player: 'alice', type: 'command' });
  same('player "alice" (by name) + commands', home.map((r) => [r.message, r.player, r.href]),
    [['/home', 'Alice', `/players/${ALICE_UUID}`]]);

  const mia = await filter(page, { player: MIA_UUID });
  same('player by UUID', mia.map((r) => r.message), ['please stop', '/ban Griefer cheating']);
  log('keyword, server, type and player (name and UUID) filters hold');
}

async function checkPagingAndExport(page) {
  const first = await filter(page, { q: 'filler' });
  same('the first page of "filler"', first.length, 50);
  const older = await page.locator('tr.older a').getAttribute('href');
  // htmx: the "Older lines" row becomes the next rows.
  await page.locator('tr.older a').click();
  await waitFor(page, 'the older lines are appended', () => document.querySelectorAll('[data-testid="chat-row"]').length === 60);
  const all = await rows(page);
  same('all "filler" lines, newest first', all.map((r) => r.message), Array.from({ length: 60 }, (_, i) => `filler line ${i}`));
  if (await page.locator('tr.older').count() !== 0) fail('an "Older lines" link remains after the last line');
  // Without htmx: the link is a page of its own.
  const response = await page.request.get(`${BASE_URL}${older}`);
  const html = await response.text();
  if (response.status() !== 200 || (html.match(/data-testid="chat-row"/g) ?? []).length !== 10) {
    fail(`the older page's link (${older}) answered ${response.status()} without the 10 older lines`);
  }
  log('paging: 50 + 10 lines, by htmx and by the plain link');

  const csv = await downloadCsv(page);
  same('the CSV of "filler": its lines are the page\'s, in order', csv.map((r) => r.id), all.map((r) => r.id));
  if (csv.some((r) => r.serverId !== SURVIVAL_ID || r.serverName !== 'Survival' || r.playerName !== 'Bob'
    || r.kind !== 'chat' || r.channel !== 'trade' || !/^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(r.sentAt))) {
    fail(`a CSV row is not the line it should be: ${JSON.stringify(csv.slice(0, 2))}`);
  }
  log('CSV: the 60 lines of the filter, as on the page');
}

async function checkHostileLines(page) {
  const hostile = await filter(page, { player: HACKER_UUID });
  same('hostile lines and name shown as text', hostile.map((r) => [r.player, r.message]),
    [[HOSTILE_NAME, FORMULA_LINE], [HOSTILE_NAME, SCRIPT_LINE]]);
  const injected = await page.evaluate(() => ({
    pwned: window.pwned ?? null,
    markup: document.querySelectorAll('#chat-list script, #chat-list img').length,
  }));
  same('no markup from a chat line or a name ran or rendered', injected, { pwned: null, markup: 0 });
  await scan(page, '/chat (hostile lines)');
  const csv = await downloadCsv(page);
  same('hostile lines and name in the CSV (formulas neutralised)', csv.map((r) => [r.playerName, r.message]),
    [[`'${HOSTILE_NAME}`, `'${FORMULA_LINE}`], [`'${HOSTILE_NAME}`, SCRIPT_LINE]]);
  log('hostile lines and name: escaped on the page, formulas neutralised in the CSV');
}

async function checkRefusedFilters(page) {
  await filter(page, { player: 'nobody-here' }, 422);
  const alert = await page.locator('#feed [role="alert"]').textContent();
  if (!alert.includes('Player: no player of this account was ever named nobody-here')) fail(`unknown player: ${alert}`);
  if (await page.locator('#export').count() !== 0) fail('a refused filter still offers an export');
  const response = await page.goto(`${BASE_URL}/chat?from=yesterday&server=nope`);
  const text = await page.locator('#feed [role="alert"]').textContent();
  if (response.status() !== 422 || !text.includes('From:') || !text.includes('Server: not a UUID')) {
    fail(`bad from and server: ${response.status()} ${text}`);
  }
  await scan(page, '/chat (refused filters)');
  log('refused filters: 422 with a message per field, no export');
}

async function checkStaffCommands(page) {
  await page.goto(`${BASE_URL}/chat`);
  await page.getByRole('link', { name: 'Staff commands' }).click();
  await waitFor(page, 'the staff-commands view', () => new URL(window.location.href).searchParams.get('view') === 'staff_commands');
  const staff = await rows(page);
  same('staff commands: Mia\'s command only', staff.map((r) => [r.player, r.kind, r.message]), [['Mia', 'command', '/ban Griefer cheating']]);
  await scan(page, '/chat?view=staff_commands');
  const csv = await downloadCsv(page);
  same('the staff-commands CSV', csv.map((r) => r.message), ['/ban Griefer cheating']);
  log('staff commands: only staff members\' commands, on the page and in the CSV');
}

async function checkAudit(page) {
  await page.goto(`${BASE_URL}/audit`);
  const text = await page.locator('main').textContent();
  const count = (text.match(/chat_exported/g) ?? []).length;
  if (count !== 3) fail(`the audit log shows ${count} chat exports, expected 3`);
  if (!text.includes('filler') || !text.includes('staff_commands')) fail('the audit log does not show the exports\' filters');
  log('audit: every export is recorded with its filter');
}

async function checkModerator(page) {
  await page.goto(`${BASE_URL}/`);
  await signOut(page);
  await signIn(page, BASE_URL, MODERATOR_LOGIN, PASSWORD);
  const links = await navLinks(page, 'text');
  if (links.includes('Chat logs')) fail(`a moderator's bar shows "Chat logs": ${links}`);
  const refused = await refusalProblem(page, BASE_URL, '/chat?q=hello', {
    role: 'Moderator',
    shows: (text) => text.includes('not available to the Moderator role') && !text.includes('hello'),
  });
  if (refused) fail(refused);
  for (const path of ['/chat/export.csv?q=hello', '/chat/rows?q=hello', '/chat?view=staff_commands']) {
    const answer = await page.request.get(`${BASE_URL}${path}`);
    const body = await answer.text();
    if (answer.status() !== 403 || body.includes('hello')) fail(`a moderator's ${path} answered ${answer.status()}`);
  }
  log('moderator: no link, 403 on the page, its rows and its export');
}

async function main() {
  // bypassCSP lets the test add axe-core; the pages' own policy is checked by the API tests.
  const browser = await launch({ bypassCSP: true });
  try {
    const { context } = browser;
    const page = context.pages()[0] ?? await context.newPage();
    const problems = [];
    watchProblems(page, problems, { allowStatus: (r) => [403, 422].includes(r.status()) });
    await signIn(page, BASE_URL, ADMIN_LOGIN, PASSWORD, '/chat');
    const links = await navLinks(page, 'text');
    if (!links.includes('Chat logs')) fail(`an admin's bar lacks "Chat logs": ${links}`);
    await checkFilters(page);
    await checkPagingAndExport(page);
    await checkHostileLines(page);
    await checkRefusedFilters(page);
    await checkStaffCommands(page);
    await checkAudit(page);
    await checkModerator(page);
    // htmx logs every error answer it swaps in; a refused filter's 422 page is one by design.
    const unexpected = problems.filter((p) => !p.includes('Response Status Error Code 422 from /chat'));
    if (unexpected.length > 0) fail(`problems seen: ${unexpected.join(' | ')}`);
    if (accessibility.length > 0) fail(`accessibility: ${accessibility.join(' | ')}`);
  } finally {
    await browser.close();
  }
}

run('chat_page', 240_000, main);
