/**
 * Helpers of the console's browser tests: Chromium (Debian's package, launched headless), waiting on
 * conditions, the accessibility check, screenshots of every page (see `screenshots`).
 */
import AxeBuilder from '@axe-core/playwright';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import { suiteInfo } from '../support/suite-info';

export const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

export async function launchChromium(): Promise<Browser> {
  const executablePath = suiteInfo().chromium;
  if (!executablePath) throw new Error("no Chromium: install Debian's chromium package (npm test does so when run as root) or set CHROMIUM_PATH");
  return chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}

/** Polls `read` until `accept` holds for what it returns; fails naming `what` and the last value. Bounded. */
export async function until<T>(what: string, read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  for (let delay = 25; ; delay = Math.min(delay * 2, 250)) {
    try {
      last = await read();
      if (accept(last)) return last;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeoutMs} ms; last: ${JSON.stringify(last)?.slice(0, 400)}${lastError ? ` (${String(lastError)})` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** Content-Security-Policy reports of a page: console messages Chromium writes when it refuses something. */
export function watchCsp(page: Page): string[] {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  page.on('pageerror', (error) => violations.push(`page error: ${error.message}`));
  return violations;
}

/** axe-core's serious and critical violations of the page as it stands (WCAG 2.x A and AA rules). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']).analyze();
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

const ROOT = join(__dirname, '../../../..');
/**
 * tmp/console-screenshots/ by default, so a test run leaves the clone's tracked files as they were;
 * `CONSOLE_SCREENSHOTS_DIR=docs/console` (relative to the repository) refreshes the docs' pictures.
 */
const SCREENSHOT_DIR = resolve(ROOT, process.env.CONSOLE_SCREENSHOTS_DIR ?? 'tmp/console-screenshots');

/** <dir>/<name>-1280.png and -390.png: the page at desktop and phone widths. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const original = page.viewportSize() ?? VIEWPORTS.desktop;
  for (const [size, viewport] of [
    ['1280', VIEWPORTS.desktop],
    ['390', VIEWPORTS.phone],
  ] as const) {
    await page.setViewportSize(viewport);
    // Layout settles at the new width before the picture (the chart re-measures itself).
    await page.evaluate(() => new Promise((resolve) => (globalThis as any).requestAnimationFrame(() => (globalThis as any).requestAnimationFrame(resolve))));
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${size}.png`), fullPage: true, animations: 'disabled' });
  }
  await page.setViewportSize(original);
}
