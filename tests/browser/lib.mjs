// What the browser tests share: launching Debian's headless Chromium through playwright-core
// (never a downloaded browser), signing in through the real sign-in form, bounded waits that
// fail with a message, and an axe-core scan.

import { chromium } from 'playwright-core';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const WAIT_MS = 15_000;

/** A failed check: run() closes the browser, prints the message and exits 1. */
export class Failure extends Error {}

export function fail(message) {
  throw new Failure(message);
}

/** An environment variable (required unless it has a fallback). */
export function env(name, fallback) {
  const value = process.env[name] ?? fallback;
  if (value === undefined || value === '') {
    console.error(`FAILED: environment variable ${name} is required`);
    process.exit(1);
  }
  return value;
}

/** Polls `check` in the page until it returns a truthy value (bounded); fails with `what`. */
export async function waitFor(page, what, check, arg, timeout = WAIT_MS) {
  try {
    return await (await page.waitForFunction(check, arg, { timeout, polling: 50 })).jsonValue();
  } catch (error) {
    const rows = await page.$$eval('[data-testid="event-row"]',
      (items) => items.slice(0, 8).map((row) => `${row.dataset.name}#${row.dataset.seq}${row.dataset.new ? ' (new)' : ''}`))
      .catch(() => []);
    const errors = await page.$$eval('.error:not([hidden]), .notice:not([hidden])', (boxes) => boxes.map((b) => b.textContent.trim()))
      .catch(() => []);
    fail(`${what} (not within ${timeout} ms: ${error.message.split('\n')[0]}); at ${page.url()}; `
      + `top rows: [${rows.join(', ')}]; messages: [${errors.join(' | ')}]`);
  }
}

/**
 * Starts Chromium with a throw-away profile; `bypassCSP` only for the accessibility scan, which
 * injects axe-core (the pages' policy rightly refuses any script not their own).
 */
export async function launch({ bypassCSP = false, timezoneId = undefined } = {}) {
  const userDataDir = mkdtempSync(join(tmpdir(), 'warden-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: env('CHROMIUM_BIN', '/usr/bin/chromium'),
    headless: true,
    bypassCSP,
    timezoneId,
    viewport: { width: 1280, height: 800 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'],
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Records what would show a page is broken: script errors, console errors, 4xx/5xx answers. */
export function watchProblems(page, problems, { allowStatus = () => false } = {}) {
  page.on('pageerror', (error) => problems.push(`page error at ${page.url()}: ${error.message}`));
  page.on('console', (message) => {
    // A failed load is judged by the response listener below (some statuses are expected).
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded')) {
      problems.push(`console at ${page.url()}: ${message.text()}`);
    }
  });
  page.on('response', (response) => {
    if (response.status() >= 400 && !allowStatus(response)) {
      problems.push(`HTTP ${response.status()} from ${response.url()}`);
    }
  });
}

/** Signs in through the sign-in form (after being sent there from `path`), then opens `path`. */
export async function signIn(page, baseUrl, login, password, path = '/') {
  await page.goto(`${baseUrl}${path}`);
  if (new URL(page.url()).pathname !== '/login') fail(`without a session, ${path} did not lead to /login (at ${page.url()})`);
  await page.getByLabel('Login').fill(login);
  await page.getByLabel('Password').fill(password);
  await Promise.all([
    page.waitForURL((url) => url.pathname !== '/login', { timeout: WAIT_MS }).catch(() => {}),
    page.getByRole('button', { name: 'Sign in' }).click(),
  ]);
  if (new URL(page.url()).pathname === '/login') {
    const error = await page.locator('.error').textContent().catch(() => '');
    fail(`signing in as ${login} failed: ${error}`);
  }
  if (path !== '/') await page.goto(`${baseUrl}${path}`);
}

/** Signs out through the bar's button and waits for the sign-in page. */
export async function signOut(page) {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL((url) => url.pathname === '/login', { timeout: WAIT_MS });
}

/** What the dashboard bar links: each link's `href`, or its text with `by = 'text'`. */
export function navLinks(page, by = 'href') {
  return page.$$eval('nav[aria-label="Dashboard"] a',
    (as, key) => as.map((a) => (key === 'text' ? a.textContent.trim() : a.getAttribute('href'))), by);
}

/**
 * Opens `path` as a member of `role` (e.g. 'Viewer') it is not for: null when it answers 403
 * with the refusal page (or, given `shows`, with a `main` whose text passes it), else what failed.
 */
export async function refusalProblem(page, baseUrl, path, { role, shows } = {}) {
  const response = await page.goto(`${baseUrl}${path}`);
  const text = await page.locator('main').textContent();
  const refused = shows ? shows(text) : text.includes(`not available to the ${role} role`);
  if (response.status() === 403 && refused) return null;
  return `a ${role.toLowerCase()} opening ${path} got ${response.status()}: ${text.trim().slice(0, 120)}`;
}

/**
 * Signs out, signs `login` (a member of `role`) in, and checks the bar has no `link` (when
 * given) and `path` is refused as refusalProblem() says; returns what failed.
 */
export async function refusalProblems(page, baseUrl, { login, password, role, link, path = link, shows }) {
  await page.goto(`${baseUrl}/`);
  await signOut(page);
  await signIn(page, baseUrl, login, password);
  const problems = [];
  if (link && (await navLinks(page)).includes(link)) problems.push(`a ${role.toLowerCase()}'s bar links ${link}`);
  const refused = await refusalProblem(page, baseUrl, path, { role, shows });
  if (refused) problems.push(refused);
  return problems;
}

const require = createRequire(import.meta.url);
const AXE_PATH = require.resolve('axe-core/axe.min.js');

/**
 * Runs axe-core on the page (WCAG 2 A/AA and best practices) and returns the serious and
 * critical violations, one line each. axe is added from node_modules as a script file.
 */
export async function accessibilityProblems(page) {
  if (!await page.evaluate(() => typeof window.axe !== 'undefined')) {
    await page.addScriptTag({ path: AXE_PATH });
  }
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return result.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')),
    }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id} (${v.help}) at ${v.targets.join(', ')}`);
}

/**
 * Scans the page with axe-core in the light and the dark scheme (the pages follow the
 * system's) and leaves it light; returns `label (scheme): problem` for each one found.
 */
export async function scanColorSchemes(page, label, log) {
  const problems = [];
  for (const colorScheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme });
    const found = await accessibilityProblems(page);
    for (const problem of found) problems.push(`${label} (${colorScheme}): ${problem}`);
    log(`axe on ${label} (${colorScheme}): ${found.length} serious or critical`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return problems;
}

/**
 * Runs `checks(page, context)` in a fresh Chromium (with `bypassCSP`, so axe-core can be added;
 * the pages' own policy is checked by the API tests), watching for broken pages as
 * watchProblems() does with `allowStatus`; then fails with every entry of `failures` (the
 * checks' and the watched problems). Makes `screenshotDir` first when given.
 */
export async function checkInBrowser({ failures, allowStatus, screenshotDir }, checks) {
  if (screenshotDir) mkdirSync(screenshotDir, { recursive: true });
  const browser = await launch({ bypassCSP: true });
  try {
    const { context } = browser;
    const page = context.pages()[0] ?? await context.newPage();
    const problems = [];
    watchProblems(page, problems, { allowStatus });
    await checks(page, context);
    failures.push(...problems);
    if (failures.length > 0) fail(`\n  - ${failures.join('\n  - ')}`);
  } finally {
    await browser.close();
  }
}

/** Runs `main`, bounded by `limitMs`; exits 0 when it passed, 1 with the failure otherwise. */
export function run(name, limitMs, main) {
  setTimeout(() => {
    console.error(`${name}: FAILED: the whole run took over ${limitMs / 1000} s`);
    process.exit(1);
  }, limitMs).unref();
  main().then(
    () => { console.log(`${name}: all checks passed`); process.exit(0); },
    (error) => {
      console.error(`${name}: FAILED: ${error instanceof Failure ? error.message : error.stack || String(error)}`);
      process.exit(1);
    },
  );
}

/**
 * What of the uPlot chart drawn in `figureSelector` (charts.js keeps the plot on
 * `figure.uplot`) does not show: the canvas running past its holder, and tick labels not wholly
 * visible inside the holder and the window: x labels
 * measured left and right of their tick (uPlot centres them), y labels above and below. Each
 * label is measured with the axis's own font on the canvas, then placed on the page; an empty
 * list when every label is inside.
 */
export async function clippedTickLabels(page, figureSelector) {
  return page.evaluate((selector) => {
    const figure = document.querySelector(selector);
    const u = figure?.uplot;
    if (!u) return ['no chart drawn'];
    const { ctx } = u;
    const canvas = ctx.canvas.getBoundingClientRect();
    const scale = ctx.canvas.width / canvas.width;
    // What shows of the canvas: its holder (which clips it) inside the figure.
    const box = (figure.querySelector('.chart-canvas') ?? figure).getBoundingClientRect();
    const left = Math.max(box.left, canvas.left, 0);
    const right = Math.min(box.right, canvas.right, document.documentElement.clientWidth);
    const top = canvas.top;
    const bottom = canvas.bottom;
    const clipped = [];
    // The whole canvas shows: a canvas wider than its holder loses its right edge (the plot's
    // end and the last time label) to the holder's clipping.
    const holder = (figure.querySelector('.chart-canvas') ?? figure).getBoundingClientRect();
    if (canvas.right > holder.right + 0.5 || canvas.left < holder.left - 0.5) {
      clipped.push(`the canvas spans ${Math.round(canvas.left)}..${Math.round(canvas.right)} px, its holder ${Math.round(holder.left)}..${Math.round(holder.right)}`);
    }
    u.axes.forEach((axis, a) => {
      if (!axis.show || !axis._splits || !axis._values) return;
      ctx.save();
      ctx.font = axis.font[0];
      const lineHeight = (axis.font[1] * 1.2) / scale;
      axis._splits.forEach((split, i) => {
        const text = axis._values[i];
        if (text === null || text === undefined || text === '') return;
        const lines = String(text).split('\n');
        const width = Math.max(...lines.map((line) => ctx.measureText(line).width)) / scale;
        if (a === 0) {
          const x = canvas.left + u.valToPos(split, 'x', true) / scale;
          if (x - width / 2 < left - 0.5 || x + width / 2 > right + 0.5) {
            clipped.push(`x label ${JSON.stringify(text)} spans ${Math.round(x - width / 2)}..${Math.round(x + width / 2)} px, the chart ${Math.round(left)}..${Math.round(right)}`);
          }
        } else {
          const y = canvas.top + u.valToPos(split, axis.scale, true) / scale;
          if (y - lineHeight / 2 < top - 0.5 || y + lineHeight / 2 > bottom + 0.5) {
            clipped.push(`y label ${JSON.stringify(text)} at ${Math.round(y)} px, the chart ${Math.round(top)}..${Math.round(bottom)}`);
          }
        }
      });
      ctx.restore();
    });
    return clipped;
  }, figureSelector);
}
