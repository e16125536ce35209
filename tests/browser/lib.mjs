// What the browser tests share: launching Debian's headless Chromium through playwright-core
// (never a downloaded browser), signing in through the real sign-in form, bounded waits that
// fail with a message, and an axe-core scan.

import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
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
export async function launch({ bypassCSP = false } = {}) {
  const userDataDir = mkdtempSync(join(tmpdir(), 'warden-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: env('CHROMIUM_BIN', '/usr/bin/chromium'),
    headless: true,
    bypassCSP,
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
