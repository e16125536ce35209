// Browser test of the Events and Funnels pages: Debian's headless Chromium, driven by
// playwright-core, signs in as a team member (no key anywhere), filters the events, sees new
// events arrive live (queued while paused, caught up after a dropped connection), builds a
// funnel from an event, and sees the live feed end when the session does.
//
//   BASE_URL=http://127.0.0.1:8080 LOGIN=viewer@example.com PASSWORD=… PLUGIN_KEY=wdn_plugin_… \
//     node tests/browser/events_page.mjs
//
// The data it expects comes from the caller (tests/pipeline/events_page.rs seeds it):
//   EXPECTED_FUNNEL   "quest_started:2,quest_completed:1": players per step of the funnel
//                     quest_started → quest_completed (default: just check two bars show)
//   LIVE_PLAYER_UUID  the player of the events this script posts (default: a fixed UUID; it
//                     must be one that already started, so the funnel's numbers don't move)
//   CHROMIUM_BIN      default /usr/bin/chromium; playwright-core never downloads a browser
//   SCREENSHOT_DIR    default <repo>/target/browser
// Exits 0 when every check passed, 1 with the failed check's message otherwise.

import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { env, fail, launch, run, signIn, signOut, waitFor, watchProblems } from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const FIRST_STEP = 'quest_started';
const SECOND_STEP = 'quest_completed';

const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const LOGIN = env('LOGIN');
const PASSWORD = env('PASSWORD');
const PLUGIN_KEY = env('PLUGIN_KEY');
const LIVE_PLAYER = env('LIVE_PLAYER_UUID', '069a79f4-44e9-4726-a5be-fca90e38aaf5');
const SCREENSHOT_DIR = env('SCREENSHOT_DIR', resolve(HERE, '../../target/browser'));
const EXPECTED_FUNNEL = (process.env.EXPECTED_FUNNEL || '')
  .split(',').filter(Boolean).map((pair) => Number(pair.split(':')[1]));

const log = (message) => console.log(`events_page: ${message}`);

/** Posts one custom event with the plugin key, from node (not the page); returns its 202 body. */
async function postEvent(name, properties) {
  const response = await fetch(`${BASE_URL}/api/v1/plugin/events`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${PLUGIN_KEY}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ player_uuid: LIVE_PLAYER, name, properties }),
  });
  const body = await response.text();
  if (response.status !== 202) fail(`POST ${name}: expected 202, got ${response.status} ${body}`);
  return JSON.parse(body);
}

/**
 * Test instrumentation, installed before the page's own script: keeps every EventSource the
 * page opens, so the test can cut the live feed's connection for good, as a network failure
 * the browser gives up on would.
 */
function instrumentEventSource() {
  const Real = window.EventSource;
  const sources = [];
  window.__feed = {
    drop() {
      const source = sources.at(-1);
      source.close();
      source.dispatchEvent(new Event('error'));
    },
  };
  window.EventSource = class extends Real {
    constructor(url, init) {
      super(url, init);
      sources.push(this);
    }
  };
}

const topRow = (page) => page.$eval('[data-testid="event-row"]', (row) => ({ id: row.dataset.id, seq: row.dataset.seq }))
  .catch(() => ({}));

async function checkEvents(page, problems, streams) {
  await signIn(page, BASE_URL, LOGIN, PASSWORD, '/events');
  if (await page.locator('input[type="password"]').count() > 0) fail('the Events page asks for a key or password');
  await waitFor(page, 'the feed is live after signing in', () => document.getElementById('live-status')?.dataset.state === 'live');
  const names = await page.$$eval('[data-testid="event-row"]', (rows) => [...new Set(rows.map((r) => r.dataset.name))]);
  log(`unfiltered list shows ${names.join(', ')}`);
  if (!names.includes(SECOND_STEP) || names.length < 2) fail(`expected several names with ${SECOND_STEP} in the unfiltered list`);
  const injected = await page.evaluate(() => document.querySelectorAll('#events-list img, #pwned').length);
  if (injected !== 0) fail('event data was rendered as HTML (an <img> appeared in the list)');
  if (!await page.locator('code.props', { hasText: '<img id=' }).count()) fail('the probe\'s markup is not shown as text');

  // Filter by name (htmx swaps the list): only matching rows remain, the address follows, and
  // the live feed restarts with the filter.
  await page.getByLabel('Event names').fill(FIRST_STEP);
  await page.getByRole('button', { name: 'Apply' }).click();
  await waitFor(page, `only ${FIRST_STEP} rows show after filtering`, (name) => {
    const rows = [...document.querySelectorAll('[data-testid="event-row"]')];
    return rows.length > 0 && rows.every((row) => row.dataset.name === name)
      && document.getElementById('live-status').dataset.state === 'live'
      && window.location.search.includes(`names=${name}`);
  }, FIRST_STEP);
  // The status may still read 'live' from the old feed for a moment: wait (with a deadline)
  // for the browser to request the filtered stream.
  const restartDeadline = Date.now() + 10_000;
  while (!(streams.at(-1)?.url ?? '').includes(`names=${FIRST_STEP}`) && Date.now() < restartDeadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const filteredStream = streams.at(-1)?.url ?? '';
  if (!filteredStream.includes(`names=${FIRST_STEP}`)) fail(`the live feed did not restart with the filter: ${filteredStream}`);
  log(`filtered: ${await page.locator('[data-testid="event-row"]').count()} ${FIRST_STEP} rows, address ${page.url()}`);

  // A non-matching event, then a matching one: the matching one appears at the top, marked new.
  await postEvent('crate_opened', { tier: 'gold' });
  const live = await postEvent(FIRST_STEP, { quest: 'live-1', note: 'posted while watching' });
  await waitFor(page, 'the live event appears at the top, marked new', (id) => {
    const top = document.querySelector('[data-testid="event-row"]');
    return top && top.dataset.id === id && top.dataset.new === 'true'
      && top.querySelector('[data-testid="new-badge"]') !== null;
  }, live.id);
  if (await page.locator('[data-name="crate_opened"]').count() > 0) fail('a filtered-out live event was shown');
  log('live event appeared at the top without a reload');

  // Paused: a new event is counted and queued, not shown; on resume it shows at the top.
  await page.getByRole('button', { name: 'Pause' }).click();
  const queued = await postEvent(FIRST_STEP, { quest: 'live-2' });
  await waitFor(page, 'the paused page counts 1 queued event',
    () => document.getElementById('queued-count').dataset.count === '1'
      && !document.getElementById('queued-count').hidden);
  if (await page.locator(`[data-id="${queued.id}"]`).count() > 0) fail('an event was shown while paused');
  if ((await topRow(page)).id !== live.id) fail('the list changed while paused');
  await page.getByRole('button', { name: 'Resume' }).click();
  await waitFor(page, 'the queued event shows at the top on resume',
    (id) => document.querySelector('[data-testid="event-row"]')?.dataset.id === id, queued.id);
  log('paused: queued 1 event; resumed: it showed');

  // A dropped connection: the page reconnects from the last event it saw and backfills what it
  // missed (the reconnect is held until the event is posted, so it must come from the log).
  const lastSeq = (await topRow(page)).seq;
  streams.hold();
  const before = streams.length;
  await page.evaluate(() => window.__feed.drop());
  await waitFor(page, 'the feed notices the dropped connection', () => document.getElementById('live-status')?.dataset.state !== 'live');
  const missed = await postEvent(FIRST_STEP, { quest: 'live-3', note: 'posted while disconnected' });
  streams.release();
  await waitFor(page, 'the event posted while disconnected shows at the top after the reconnect',
    (id) => document.querySelector('[data-testid="event-row"]')?.dataset.id === id
      && document.querySelectorAll(`[data-id="${id}"]`).length === 1
      && document.getElementById('live-status').dataset.state === 'live', missed.id);
  const resumed = streams.slice(before).at(-1);
  const after = new URL(resumed.url).searchParams.get('after') ?? resumed.lastEventId;
  if (after !== lastSeq) fail(`the reconnect resumed after ${after}, expected ${lastSeq} (${resumed.url})`);
  log(`dropped connection: reconnected after seq ${after} and caught up`);
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'events_page.png'), fullPage: true });

  await checkNarrow(page, 'the Events page');
}

async function checkFunnel(page) {
  // An event's name opens the funnel builder with that event as step 1.
  await page.locator('[data-testid="event-name"]').first().click();
  await waitFor(page, 'the funnel builder opens with the clicked event as step 1',
    (name) => window.location.pathname === '/funnels'
      && document.getElementById('funnel-step-1')?.value === name, FIRST_STEP);
  await page.getByRole('button', { name: 'Add step' }).click();
  await waitFor(page, 'Add step adds a step', () => document.querySelectorAll('[data-testid="funnel-step"]').length === 3);
  await page.getByRole('button', { name: 'Remove step 3' }).click();
  await waitFor(page, 'Remove removes the step', () => document.querySelectorAll('[data-testid="funnel-step"]').length === 2);
  if (await page.locator('#funnel-step-1').inputValue() !== FIRST_STEP) fail('step 1 changed while editing the steps');
  // The three orders and the window are offered.
  const orders = await page.$$eval('#funnel-order option', (options) => options.map((o) => o.value));
  if (orders.join(',') !== 'sequential,strict,any') fail(`the orders offered are ${orders}`);
  await page.getByLabel('Window', { exact: true }).fill('2');
  await page.getByLabel('Window unit').selectOption('86400');
  await page.getByLabel('Step 2', { exact: true }).fill(SECOND_STEP);
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  const bars = await waitFor(page, 'the funnel shows a bar per step (or an error)', () => {
    const error = document.getElementById('funnel-error');
    if (error) return { error: error.textContent };
    const bars = [...document.querySelectorAll('[data-testid="funnel-bar"]')];
    return bars.length === 2 ? { bars: bars.map((bar) => ({
      name: bar.dataset.name, players: Number(bar.dataset.players), text: bar.textContent,
      value: bar.querySelector('meter').value, max: bar.querySelector('meter').max,
    })) } : null;
  });
  if (bars.error) fail(`the funnel returned an error: ${bars.error}`);
  log(`funnel: ${bars.bars.map((b) => `${b.name}=${b.players}`).join(', ')}`);
  if (bars.bars[0].name !== FIRST_STEP || bars.bars[1].name !== SECOND_STEP) fail('funnel steps out of order');
  EXPECTED_FUNNEL.forEach((players, index) => {
    if (bars.bars[index].players !== players) {
      fail(`funnel step ${index + 1}: expected ${players} players, the page shows ${bars.bars[index].players}`);
    }
    if (!bars.bars[index].text.includes(`${players} player`)) fail(`funnel step ${index + 1} label lacks "${players} player"`);
  });
  const [start, next] = bars.bars;
  if (start.players > 0 && (start.value !== start.max || next.value / next.max !== next.players / start.players)) {
    fail(`bars are not proportional to players (${start.value}/${start.max}, ${next.value}/${next.max})`);
  }
  if (start.players > 0 && !next.text.includes(`${+(100 * next.players / start.players).toFixed(1)}% of start`)) {
    fail(`funnel step 2 lacks its conversion from start: ${next.text}`);
  }
  if (await page.getByLabel('Window', { exact: true }).inputValue() !== '2') fail('the window was not kept with the result');
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'funnels_page.png'), fullPage: true });
  await checkNarrow(page, 'the Funnels page');
}

/** Narrow screens: nothing wider than the viewport. */
async function checkNarrow(page, what) {
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 1) fail(`at 390 px wide ${what} scrolls sideways by ${overflow} px`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** Signing out in one tab ends the live feed of another within a few seconds. */
async function checkSignOutEndsTheFeed(context, page) {
  const watching = await context.newPage();
  await watching.goto(`${BASE_URL}/events`);
  await waitFor(watching, 'a second tab\'s feed is live', () => document.getElementById('live-status')?.dataset.state === 'live');
  await page.goto(`${BASE_URL}/events`);
  await signOut(page);
  const said = await waitFor(watching, 'the other tab\'s live feed ends with the session', () => {
    const box = document.getElementById('live-notice');
    return box && !box.hidden && document.getElementById('live-status').dataset.state === 'idle' ? box.textContent : null;
  }, undefined, 10_000);
  log(`after signing out, the other tab says: "${said.trim()}"`);
  await watching.goto(`${BASE_URL}/events`);
  if (new URL(watching.url()).pathname !== '/login') fail('after signing out, /events still opens');
  await watching.close();
}

async function main() {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const browser = await launch();
  try {
    const page = browser.context.pages()[0] ?? await browser.context.newPage();
    await browser.context.addInitScript(instrumentEventSource);
    const problems = [];
    watchProblems(page, problems);
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.origin !== new URL(BASE_URL).origin) problems.push(`a request to another origin: ${url}`);
      if (url.pathname.startsWith('/api/')) problems.push(`the page called the key API: ${url}`);
    });
    // Every live-feed request, and a gate to hold reconnects.
    const streams = [];
    let gate = null;
    streams.hold = () => {
      let open;
      gate = new Promise((resolve) => { open = resolve; });
      streams.release = () => { gate = null; open(); };
    };
    await browser.context.route(/\/events\/stream/, async (route) => {
      const headers = await route.request().allHeaders();
      streams.push({ url: route.request().url(), lastEventId: headers['last-event-id'] ?? null });
      if (gate) await gate;
      await route.continue();
    });
    await checkEvents(page, problems, streams);
    await checkFunnel(page);
    if (problems.length > 0) fail(`the pages reported errors: ${problems.join(' | ')}`);
    await checkSignOutEndsTheFeed(browser.context, page);
  } finally {
    await browser.close();
  }
}

run('events_page', 180_000, main);
