// Takes every page of the dashboard's bar (and one server's and one player's page) at 1440 px
// and 390 px wide, light and dark, for a person to look at: the header, the menus, the empty
// states. Not for the docs (tests/browser/screenshots.mjs makes those); the files go to OUT_DIR
// (default <repo>/target/screenshots), named <page>-<width>-<scheme>.png, plus the open menu and
// a group's drop-down.
//
//   source .local/stack.env
//   BASE_URL=$BASE_URL LOGIN=$DASHBOARD_LOGIN PASSWORD=$DASHBOARD_PASSWORD \
//     node tests/browser/screenshots_all.mjs
//
// CHROMIUM_BIN (default /usr/bin/chromium). Every page must answer 200 with no script error.

import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { env, fail, launch, navLinks, run, signIn, watchProblems } from './lib.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const BASE_URL = env('BASE_URL').replace(/\/$/, '');
const LOGIN = env('LOGIN');
const PASSWORD = env('PASSWORD');
const OUT_DIR = env('OUT_DIR', resolve(HERE, '../../target/screenshots'));
const WIDTHS = [1440, 390];
const SCHEMES = ['light', 'dark'];

const log = (message) => console.log(`screenshots_all: ${message}`);

/** A file name for a path: `/analytics/trends` is `analytics-trends`, `/` is `overview`. */
const nameOf = (path) => (path === '/' ? 'overview' : path.replace(/^\//, '').replace(/[^a-z0-9]+/gi, '-').replace(/-$/, ''));

async function firstLink(page, path, selector) {
  await page.goto(`${BASE_URL}${path}`);
  const href = await page.locator(selector).first().getAttribute('href').catch(() => null);
  return href ? new URL(href, BASE_URL).pathname : null;
}

run('screenshots_all', 600_000, async () => {
  mkdirSync(OUT_DIR, { recursive: true });
  const browser = await launch();
  try {
    const { context } = browser;
    const page = context.pages()[0] ?? await context.newPage();
    const problems = [];
    watchProblems(page, problems);
    await page.setViewportSize({ width: 1440, height: 900 });
    await signIn(page, BASE_URL, LOGIN, PASSWORD);
    const paths = (await navLinks(page)).filter((href) => href.startsWith('/'));
    const server = await firstLink(page, '/servers', 'main a[href^="/servers/"]');
    const player = await firstLink(page, '/players', 'main a[href^="/players/"]');
    for (const extra of [server, player]) if (extra) paths.push(extra);
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: width > 800 ? 900 : 844 });
      for (const colorScheme of SCHEMES) {
        await page.emulateMedia({ colorScheme });
        for (const path of paths) {
          const response = await page.goto(`${BASE_URL}${path}`, { waitUntil: 'networkidle' });
          if (response?.status() !== 200) fail(`${path} answered ${response?.status()}`);
          await page.waitForTimeout(300);
          const name = nameOf(path).replace(/-[0-9a-f]{8}-[0-9a-f-]{27}$/, '');
          await page.screenshot({ path: join(OUT_DIR, `${name}-${width}-${colorScheme}.png`), fullPage: width < 800 });
        }
        await page.goto(`${BASE_URL}/players`);
        if (width < 800) {
          await page.locator('summary.menu-toggle').click();
          await page.screenshot({ path: join(OUT_DIR, `menu-${width}-${colorScheme}.png`) });
        } else {
          await page.locator('.nav-group summary').first().click();
          await page.screenshot({ path: join(OUT_DIR, `group-${width}-${colorScheme}.png`) });
        }
        log(`${paths.length} pages at ${width} px, ${colorScheme}`);
      }
    }
    if (problems.length > 0) fail(`\n  - ${problems.join('\n  - ')}`);
  } finally {
    await browser.close();
  }
});
