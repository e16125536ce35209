// Browser test of the whole staff dashboard: Debian's headless Chromium, driven by
// playwright-core, signs in as an owner on a stack fed through ingest, visits every page of the
// navigation bar (and a server's page), checks each shows this network's data, watches the
// Overview's activity feed update without a reload, signs out (the old cookie no longer opens
// anything), then signs in as a viewer: the admin pages are not in the bar and answer 403. Every
// page is scanned with axe-core, light and dark: no serious or critical violation may remain.
//
//   BASE_URL=… OWNER_LOGIN=… VIEWER_LOGIN=… PASSWORD=… PLUGIN_KEY=… SERVER_ID=… \
//     node tests/browser/dashboard.mjs
//
// tests/pipeline/dashboard_pages.rs seeds the network (server "Lobby", staff member "Mia",
// player "Griefer", staff groups Moderator and Helper, events quest_started/quest_completed)
// and runs this. CHROMIUM_BIN (default /usr/bin/chromium), SCREENSHOT_DIR (default
// <repo>/target/browser). Exits 0 when every check passed, 1 with the failures otherwise.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  checkInBrowser, env, fail, navLinks, refusalProblem, run, scanColorSchemes, signIn, signOut, waitFor,
} from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const OWNER_LOGIN = env('OWNER_LOGIN');
const VIEWER_LOGIN = env('VIEWER_LOGIN');
const PASSWORD = env('PASSWORD');
const PLUGIN_KEY = env('PLUGIN_KEY');
const SERVER_ID = env('SERVER_ID');
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));
const SESSION_COOKIE = '__Host-warden_session';

/** Every page of the navigation bar (query-api/src/pages/mod.rs, PAGES), in order. */
// In the bar's order: Overview, Servers, then the groups Moderation, Analytics, Administration.
const NAV = ['/', '/servers', '/players', '/punishments', '/appeals', '/anticheat', '/chat', '/staff', '/events', '/analytics/trends', '/funnels', '/analytics/retention', '/team', '/alerts', '/settings', '/connect', '/audit'];
/** Pages only admins and owners may open. */
const ADMIN_ONLY = ['/team', '/settings', '/connect', '/alerts', '/audit'];
/** What each page must show of the seeded network: text that only real data puts there. */
const EXPECTED = {
  '/': ['Lobby', 'Mia'],
  '/servers': ['Lobby', '1.21.4'],
  [`/servers/${SERVER_ID}`]: ['Lobby'],
  '/players': ['Mia', 'Griefer'],
  '/punishments': ['Griefer', 'spam'],
  '/appeals': [],
  '/anticheat': [],
  '/chat': [],
  '/staff': ['Mia', 'Moderator'],
  '/events': ['quest_started', 'quest_completed'],
  '/funnels': [],
  '/analytics/retention': ['Day 7', 'Day 30'],
  '/analytics/trends': [],
  '/team': ['Olive Owner', VIEWER_LOGIN],
  '/settings': ['Helper', 'Data retention', 'Anti-cheat flags'],
  '/connect': ['Create key and show config.yml'],
  '/alerts': [],
  '/audit': [OWNER_LOGIN],
};

const log = (message) => console.log(`dashboard: ${message}`);

/** Collects failures so one run reports every missing page and every violation. */
const failures = [];
const accessibility = [];

/** Scans the page in the light and the dark scheme (the pages follow the system's). */
async function scan(page, label) {
  accessibility.push(...await scanColorSchemes(page, label, log));
}

async function visit(page, path) {
  const response = await page.goto(`${BASE_URL}${path}`);
  const status = response?.status() ?? 0;
  const landed = new URL(page.url()).pathname;
  if (status === 404) {
    failures.push(`${path} is missing (404): the page has not been built or is not routed`);
    return false;
  }
  if (status !== 200 || landed !== path) {
    failures.push(`${path} answered ${status} at ${landed}`);
    return false;
  }
  return true;
}

async function checkPages(page) {
  const links = await navLinks(page);
  if (links.join(' ') !== NAV.join(' ')) failures.push(`an owner's bar links ${links.join(' ')}, expected ${NAV.join(' ')}`);
  for (const path of [...NAV.slice(0, 2), `/servers/${SERVER_ID}`, ...NAV.slice(2)]) {
    if (!await visit(page, path)) continue;
    const html = await page.content();
    const missing = EXPECTED[path].filter((text) => !html.includes(text));
    if (missing.length > 0) failures.push(`${path} does not show ${missing.join(', ')} from the pipeline`);
    else log(`${path} shows ${EXPECTED[path].join(', ') || 'its form'}`);
    await scan(page, path);
    // Every drawn chart's value axis starts at zero (a flat line must not look like a cliff).
    const axes = await waitFor(page, `${path}'s charts drawn`, () => {
      const figures = [...document.querySelectorAll('figure[data-chart]')];
      if (figures.some((f) => !f.uplot)) return null;
      return figures.map((f) => f.uplot.scales.y.min);
    });
    if (axes.some((min) => min > 0)) failures.push(`${path}: a chart's y axis starts at ${axes.join(', ')}, not 0`);
    const name = path === '/' ? 'overview' : path.slice(1).replaceAll('/', '_');
    await page.screenshot({ path: join(SCREENSHOT_DIR, `dashboard_${name}.png`), fullPage: true });
  }
  // A funnel computed from the pipeline's events, and its result scanned too.
  if (await visit(page, '/funnels')) {
    await page.goto(`${BASE_URL}/funnels?step=quest_started&step=quest_completed`);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const result = await waitFor(page, 'the funnel of the seeded events shows', () => {
      const bars = [...document.querySelectorAll('[data-testid="funnel-bar"]')];
      return bars.length === 2 ? bars.map((bar) => Number(bar.dataset.players)) : null;
    });
    if (result.join(',') !== '1,1') failures.push(`the funnel of the seeded events shows ${result}, expected 1,1`);
    await scan(page, '/funnels (with a result)');
  }
}

/** A join posted through ingest appears in the Overview's activity feed without a reload. */
async function checkLiveActivity(page) {
  if (!await visit(page, '/')) return;
  if (await page.locator('#activity').count() === 0) {
    failures.push('the Overview has no activity feed (#activity)');
    return;
  }
  await page.evaluate(() => { window.__notReloaded = true; });
  const name = `Live${Date.now() % 100000}`;
  const response = await fetch(`${BASE_URL}/api/plugin/sessions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${PLUGIN_KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      server_id: SERVER_ID, player_uuid: '7d000000-0000-4000-8000-0000000000b1', player_name: name,
      event: 'join', at: new Date().toISOString(),
    }),
  });
  if (response.status !== 202) fail(`posting a join: ${response.status} ${await response.text()}`);
  await waitFor(page, `the join of ${name} appears in the activity feed without a reload`,
    (who) => window.__notReloaded === true && document.getElementById('activity').textContent.includes(who), name);
  log(`activity feed: ${name}'s join appeared live`);
}

/** The session cookie as Chromium kept it over http://127.0.0.1 (a secure context). */
async function checkCookie(context) {
  const cookies = await context.cookies(BASE_URL);
  const session = cookies.find((cookie) => cookie.name === SESSION_COOKIE);
  if (!session) fail(`Chromium did not keep the ${SESSION_COOKIE} cookie on ${BASE_URL}: ${cookies.map((c) => c.name)}`);
  if (!session.secure || !session.httpOnly || session.sameSite !== 'Lax' || session.path !== '/') {
    fail(`the session cookie's flags: ${JSON.stringify(session)}`);
  }
  log(`Chromium keeps ${SESSION_COOKIE} over plain http on loopback (Secure, HttpOnly, SameSite=Lax)`);
  return session;
}

/** Signing out ends the session: the page goes to sign-in, and the old cookie opens nothing. */
async function checkSignOut(context, page, session) {
  await page.goto(`${BASE_URL}/`);
  await signOut(page);
  if ((await context.cookies(BASE_URL)).some((c) => c.name === SESSION_COOKIE && c.value)) {
    fail('the session cookie is still there after signing out');
  }
  // The old cookie, replayed by hand (Chromium would not let a test plant a Secure cookie
  // over http): the server has ended its session.
  const replay = await fetch(`${BASE_URL}/`, {
    headers: { Cookie: `${session.name}=${session.value}` }, redirect: 'manual',
  });
  if (replay.status !== 303 || replay.headers.get('location') !== '/login') {
    fail(`the signed-out session's cookie still opens the Overview (${replay.status})`);
  }
  await page.goto(`${BASE_URL}/`);
  if (new URL(page.url()).pathname !== '/login') fail('after signing out, the Overview still opens');
  log('sign-out: the old cookie no longer opens anything');
  await scan(page, '/login');
}

/** A viewer: no admin links in the bar, and an admin page is a 403 page. */
async function checkViewer(page) {
  await signIn(page, BASE_URL, VIEWER_LOGIN, PASSWORD);
  const links = await navLinks(page);
  const shown = ADMIN_ONLY.filter((path) => links.includes(path));
  if (shown.length > 0) failures.push(`a viewer's bar links ${shown.join(', ')}`);
  for (const path of ['/', '/servers', '/staff', '/events', '/funnels']) {
    if (!links.includes(path)) failures.push(`a viewer's bar lacks ${path}`);
  }
  for (const path of ADMIN_ONLY) {
    const refused = await refusalProblem(page, BASE_URL, path, { role: 'Viewer' });
    if (refused) failures.push(refused);
  }
  await scan(page, 'a 403 page');
  log('viewer: no admin links, admin pages answer 403');
}

async function main() {
  // The viewer's 403s are expected; the missing pages are reported by visit().
  const allowStatus = (r) => [403, 404].includes(r.status());
  await checkInBrowser({ failures, allowStatus, screenshotDir: SCREENSHOT_DIR }, async (page, context) => {
    await signIn(page, BASE_URL, OWNER_LOGIN, PASSWORD);
    const session = await checkCookie(context);
    await checkPages(page);
    await checkLiveActivity(page);
    await checkSignOut(context, page, session);
    await checkViewer(page);
    if (accessibility.length > 0) failures.push(`accessibility (axe-core ${await page.evaluate(() => window.axe?.version)}): ${accessibility.join(' | ')}`);
  });
}

run('dashboard', 240_000, main);
