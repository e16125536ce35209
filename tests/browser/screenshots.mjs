// Takes the documentation's screenshots (docs/images/*.png) of a running Warden with data in it,
// usually the demo network of `./deploy/up.sh --detach --demo`: signs in as the demo owner in
// Debian's headless Chromium (1280 x 800, light scheme) and captures one page per file. Every
// page must answer 200 at its own address and show no script error, or the run fails and the
// files already written are left as they were taken.
//
//   source .local/stack.env
//   BASE_URL=$BASE_URL LOGIN=$DASHBOARD_LOGIN PASSWORD=$DASHBOARD_PASSWORD \
//     node tests/browser/screenshots.mjs
//
// OUT_DIR (default <repo>/docs/images), PLAYER_UUID (the player page to show; default: the
// newest punished player), CHROMIUM_BIN (default /usr/bin/chromium).

import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { env, fail, launch, run, signIn, watchProblems } from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const LOGIN = env('LOGIN');
const PASSWORD = env('PASSWORD');
const OUT_DIR = env('OUT_DIR', resolve(HERE, '../../docs/images'));

const log = (message) => console.log(`screenshots: ${message}`);

/** The first link of the page matching `selector`, as a path (a server, a player). */
async function firstLink(page, path, selector) {
  await page.goto(`${BASE_URL}${path}`);
  const href = await page.locator(selector).first().getAttribute('href').catch(() => null);
  if (!href) fail(`${path} links no ${selector}: is there data in this network?`);
  return new URL(href, BASE_URL).pathname;
}

/**
 * Opens `path`, lets charts draw, and saves the top of the page, 1280 pixels wide and at most
 * `height` tall, as `<name>.png`.
 */
async function capture(page, name, path, height = 1100) {
  const response = await page.goto(`${BASE_URL}${path}`, { waitUntil: 'networkidle' });
  const status = response?.status() ?? 0;
  if (status !== 200) fail(`${path} answered ${status}`);
  // uPlot draws after load; give the charts a frame.
  await page.waitForTimeout(500);
  const full = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.screenshot({
    path: join(OUT_DIR, `${name}.png`),
    fullPage: true,
    clip: { x: 0, y: 0, width: 1280, height: Math.min(full, height) },
  });
  log(`${name}.png: ${path}`);
}

run('screenshots', 120_000, async () => {
  mkdirSync(OUT_DIR, { recursive: true });
  const browser = await launch();
  try {
    const { context } = browser;
    const page = context.pages()[0] ?? await context.newPage();
    await page.emulateMedia({ colorScheme: 'light' });
    const problems = [];
    watchProblems(page, problems);
    await signIn(page, BASE_URL, LOGIN, PASSWORD);
    const server = await firstLink(page, '/servers', 'main a[href^="/servers/"]');
    // A punished player (or PLAYER_UUID's): their page has the most to show.
    const player = process.env.PLAYER_UUID ? `/players/${process.env.PLAYER_UUID}`
      : await firstLink(page, '/punishments', 'main a[href^="/players/"]');
    await capture(page, 'overview', '/', 1400);
    await capture(page, 'servers', '/servers', 800);
    await capture(page, 'server', server, 1400);
    await capture(page, 'investigate', player, 1600);
    await capture(page, 'punishments', '/punishments');
    await capture(page, 'anticheat', '/anticheat');
    await capture(page, 'events', '/events');
    // With no steps, the page opens on its example funnel from the account's event names.
    await capture(page, 'funnels', '/funnels', 1500);
    await capture(page, 'trends', '/analytics/trends?kind=event&event=quest_started&bucket=day&measure=total&breakdown=server', 1500);
    await capture(page, 'retention', '/analytics/retention?period=day&days=1,3,7', 1500);
    await capture(page, 'alerts', '/alerts');
    if (problems.length > 0) fail(`\n  - ${problems.join('\n  - ')}`);
  } finally {
    await browser.close();
  }
});
