// Browser test of the Events page (/events): Debian's headless Chromium, driven by playwright-core,
// enters the dashboard key, filters, sees new events arrive live (and queue while paused, and
// catch up after a dropped connection), builds a funnel, and handles a refused key.
//
//   BASE_URL=http://127.0.0.1:8080 DASHBOARD_KEY=wdn_dash_… PLUGIN_KEY=wdn_plugin_… \
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

import { chromium } from 'playwright-core';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const WAIT_MS = 15_000;
const WHOLE_RUN_MS = 180_000;
const FIRST_STEP = 'quest_started';
const SECOND_STEP = 'quest_completed';

/** A failed check: main() closes the browser, prints the message and exits 1. */
class Failure extends Error {}

function fail(message) {
  throw new Failure(message);
}

function exitFailed(message) {
  console.error(`events_page: FAILED: ${message}`);
  process.exit(1);
}

function env(name, fallback) {
  const value = process.env[name] ?? fallback;
  if (value === undefined || value === '') exitFailed(`environment variable ${name} is required`);
  return value;
}

const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const DASHBOARD_KEY = env('DASHBOARD_KEY');
const PLUGIN_KEY = env('PLUGIN_KEY');
const LIVE_PLAYER = env('LIVE_PLAYER_UUID', '069a79f4-44e9-4726-a5be-fca90e38aaf5');
const CHROMIUM_BIN = env('CHROMIUM_BIN', '/usr/bin/chromium');
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

/** Polls `check` in the page until it returns a truthy value (bounded); fails with `what`. */
async function waitFor(page, what, check, arg) {
  try {
    return await (await page.waitForFunction(check, arg, { timeout: WAIT_MS, polling: 50 })).jsonValue();
  } catch (error) {
    const rows = await page.$$eval('[data-testid="event-row"]',
      (items) => items.slice(0, 8).map((row) => `${row.dataset.name}#${row.dataset.seq}${row.dataset.new ? ' (new)' : ''}`))
      .catch(() => []);
    const errors = await page.$$eval('.error-box:not([hidden])', (boxes) => boxes.map((b) => b.textContent))
      .catch(() => []);
    fail(`${what} (not within ${WAIT_MS} ms: ${error.message.split('\n')[0]}); `
      + `top rows: [${rows.join(', ')}]; error boxes: [${errors.join(' | ')}]`);
  }
}

/**
 * Test instrumentation, installed before the page's own scripts: wraps fetch() so the test can
 * cut the live feed's connection (as a network drop would) and hold the reconnect, and records
 * the Last-Event-ID of every stream request.
 */
function instrumentLiveFeed() {
  const realFetch = window.fetch.bind(window);
  let drop = () => {};
  let gate = null;
  window.__feed = {
    lastEventIds: [],
    hold() {
      let open;
      gate = new Promise((resolve) => { open = resolve; });
      window.__feed.release = () => { gate = null; open(); };
    },
    drop: () => drop(),
  };
  window.fetch = async (input, init = {}) => {
    if (!String(input).includes('/api/v1/events/stream')) return realFetch(input, init);
    if (gate) await gate;
    window.__feed.lastEventIds.push(new Headers(init.headers).get('Last-Event-ID'));
    const response = await realFetch(input, init);
    if (!response.body) return response;
    const upstream = response.body.getReader();
    const body = new ReadableStream({
      start(controller) {
        drop = () => {
          controller.error(new TypeError('network error (simulated drop)'));
          upstream.cancel().catch(() => {});
        };
      },
      async pull(controller) {
        try {
          const { value, done } = await upstream.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch {
          // Dropped meanwhile.
        }
      },
      cancel: (reason) => upstream.cancel(reason),
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

const topRowId = (page) => page.$eval('[data-testid="event-row"]', (row) => row.dataset.id).catch(() => null);

async function run(page, problems) {
  await page.goto(`${BASE_URL}/events`);
  await waitFor(page, 'the key form shows', () => !document.getElementById('key-panel').hidden);
  await page.getByLabel('Key', { exact: true }).fill(DASHBOARD_KEY);
  await page.getByRole('button', { name: 'Use key' }).click();
  await waitFor(page, 'the app shows and the feed is live after entering the key',
    () => !document.getElementById('app').hidden
      && document.getElementById('live-status').dataset.state === 'live');
  const names = await waitFor(page, 'the unfiltered list shows several event names', () => {
    const names = new Set([...document.querySelectorAll('[data-testid="event-row"]')].map((r) => r.dataset.name));
    return names.size >= 2 ? [...names] : null;
  });
  log(`unfiltered list shows ${names.join(', ')}`);
  if (!names.includes(SECOND_STEP)) fail(`expected ${SECOND_STEP} in the unfiltered list`);
  const injected = await page.evaluate(() => document.querySelectorAll('#events-list img, #pwned').length);
  if (injected !== 0) fail('event data was rendered as HTML (an <img> appeared in the list)');

  // Filter by name: only matching rows remain, and the live feed restarts with the filter.
  await page.getByLabel('Event names').fill(FIRST_STEP);
  await page.getByRole('button', { name: 'Apply' }).click();
  await waitFor(page, `only ${FIRST_STEP} rows show after filtering`, (name) => {
    const rows = [...document.querySelectorAll('[data-testid="event-row"]')];
    return rows.length > 0 && rows.every((row) => row.dataset.name === name)
      && document.getElementById('live-status').dataset.state === 'live';
  }, FIRST_STEP);
  log(`filtered: ${await page.locator('[data-testid="event-row"]').count()} ${FIRST_STEP} rows`);

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
  if (await topRowId(page) !== live.id) fail('the list changed while paused');
  await page.getByRole('button', { name: 'Resume' }).click();
  await waitFor(page, 'the queued event shows at the top on resume',
    (id) => document.querySelector('[data-testid="event-row"]')?.dataset.id === id, queued.id);
  log('paused: queued 1 event; resumed: it showed');

  // A dropped connection: the feed reconnects with Last-Event-ID and backfills what it missed.
  const lastSeq = await page.$eval('[data-testid="event-row"]', (row) => row.dataset.seq);
  await page.evaluate(() => { window.__feed.hold(); window.__feed.drop(); });
  await waitFor(page, 'the feed notices the dropped connection',
    () => document.getElementById('live-status').dataset.state !== 'live');
  const missed = await postEvent(FIRST_STEP, { quest: 'live-3', note: 'posted while disconnected' });
  await page.evaluate(() => window.__feed.release());
  await waitFor(page, 'the event posted while disconnected shows at the top after the reconnect',
    (id) => document.querySelector('[data-testid="event-row"]')?.dataset.id === id
      && document.querySelectorAll(`[data-id="${id}"]`).length === 1
      && document.getElementById('live-status').dataset.state === 'live', missed.id);
  const resumedFrom = await page.evaluate(() => window.__feed.lastEventIds.at(-1));
  if (resumedFrom !== lastSeq) fail(`the reconnect sent Last-Event-ID ${resumedFrom}, expected ${lastSeq}`);
  log(`dropped connection: reconnected with Last-Event-ID ${resumedFrom} and caught up`);

  // The funnel builder starts from the clicked event's name.
  await page.locator('[data-testid="event-name"]').first().click();
  await waitFor(page, 'the funnel builder opens with the clicked event as step 1',
    (name) => !document.getElementById('funnel').hidden
      && document.getElementById('funnel-step-1')?.value === name, FIRST_STEP);
  await page.getByRole('button', { name: 'Add step' }).click();
  if (await page.locator('[data-testid="funnel-step"]').count() !== 3) fail('Add step did not add a step');
  await page.getByRole('button', { name: 'Remove step 3' }).click();
  if (await page.locator('[data-testid="funnel-step"]').count() !== 2) fail('Remove did not remove the step');
  await page.getByLabel('Step 2', { exact: true }).fill(SECOND_STEP);
  await page.getByRole('button', { name: 'Run' }).click();
  const bars = await waitFor(page, 'the funnel shows a bar per step (or an error)', () => {
    const error = document.getElementById('funnel-error');
    if (!error.hidden) return { error: error.textContent };
    const bars = [...document.querySelectorAll('[data-testid="funnel-bar"]')];
    return bars.length === 2 ? { bars: bars.map((bar) => ({
      name: bar.dataset.name, players: Number(bar.dataset.players), text: bar.textContent,
      width: bar.querySelector('.bar').getBoundingClientRect().width,
    })) } : null;
  });
  if (bars.error) {
    fail(/404|not found/i.test(bars.error)
      ? `POST /api/v1/funnels is not available yet (404): ${bars.error}`
      : `the funnel returned an error: ${bars.error}`);
  }
  log(`funnel: ${bars.bars.map((b) => `${b.name}=${b.players}`).join(', ')}`);
  if (bars.bars[0].name !== FIRST_STEP || bars.bars[1].name !== SECOND_STEP) fail('funnel steps out of order');
  EXPECTED_FUNNEL.forEach((players, index) => {
    if (bars.bars[index].players !== players) {
      fail(`funnel step ${index + 1}: expected ${players} players, the page shows ${bars.bars[index].players}`);
    }
    if (!bars.bars[index].text.includes(`${players} player`)) fail(`funnel step ${index + 1} label lacks "${players} player"`);
  });
  const [start, next] = bars.bars;
  if (start.players > 0 && Math.abs(next.width / start.width - next.players / start.players) > 0.05) {
    fail(`bar widths are not proportional to players (${start.width}px, ${next.width}px)`);
  }
  if (start.players > 0 && !next.text.includes(`${+(100 * next.players / start.players).toFixed(1)}% of start`)) {
    fail(`funnel step 2 lacks its conversion from start: ${next.text}`);
  }
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'events_page.png'), fullPage: true });
  log(`screenshot: ${join(SCREENSHOT_DIR, 'events_page.png')}`);

  // Narrow screens: nothing wider than the viewport.
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 1) fail(`at 390 px wide the page scrolls sideways by ${overflow} px`);
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'events_page_narrow.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });

  if (problems.length > 0) fail(`the page reported errors: ${problems.join(' | ')}`);

  // Forget the key, then a refused key: the key form comes back with a clear message.
  await page.getByRole('button', { name: 'Forget key' }).click();
  await waitFor(page, 'forgetting the key shows the key form and clears storage',
    () => !document.getElementById('key-panel').hidden && sessionStorage.length === 0);
  await page.getByLabel('Key', { exact: true }).fill('wdn_dash_0000000000000000000000000000000000000000000000000000000000000000');
  await page.getByRole('button', { name: 'Use key' }).click();
  const message = await waitFor(page, 'a refused key shows a message and the key form again', () => {
    const box = document.getElementById('key-message');
    return !box.hidden && !document.getElementById('key-panel').hidden ? box.textContent : null;
  });
  log(`refused key: "${message}"`);
}

async function main() {
  // Playwright kills the browser it launched when node exits.
  setTimeout(() => exitFailed(`the whole run took over ${WHOLE_RUN_MS / 1000} s`), WHOLE_RUN_MS).unref();
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const userDataDir = mkdtempSync(join(tmpdir(), 'warden-chromium-'));
  let context;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_BIN,
      headless: true,
      viewport: { width: 1280, height: 800 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
        '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'],
    });
    const page = context.pages()[0] ?? await context.newPage();
    await page.addInitScript(instrumentLiveFeed);
    const problems = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`HTTP ${response.status()} from ${response.url()}`);
    });
    page.on('request', (request) => {
      if (request.url().includes(DASHBOARD_KEY)) problems.push(`the key is in a URL: ${request.url()}`);
      const isApi = new URL(request.url()).pathname.startsWith('/api/');
      if (isApi && !String(request.headers().authorization || '').startsWith('Bearer wdn_dash_')) {
        problems.push(`an API call without the key: ${request.url()}`);
      }
    });
    await run(page, problems);
    log('all checks passed');
  } finally {
    await context?.close();
    rmSync(userDataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error) => exitFailed(error instanceof Failure ? error.message : error.stack || String(error)),
);
