// Helpers of the console story: launching Debian's Chromium through
// playwright-core, screenshots at laptop and phone widths, and small waits
// that fail with a message saying what was expected.

import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

/** Laptop and phone viewports. */
export const WIDE = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };

/** Reads a required environment variable. */
export function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (tests/console/main.rs sets it)`);
  return value;
}

/** Launches headless Chromium with flags that work on a closed network. */
export async function launch(executablePath) {
  const profile = mkdtempSync(join(tmpdir(), 'switchboard-console-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: WIDE,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  context.setDefaultTimeout(15000);
  return context;
}

/** Screenshots into a directory, numbered in story order. */
export class Shots {
  constructor(dir) {
    this.dir = dir;
    this.n = 0;
    this.taken = [];
    mkdirSync(dir, { recursive: true });
  }

  /** Saves `page` as `NN-name-<width>.png` (whole page). */
  async take(page, name) {
    this.n += 1;
    const width = page.viewportSize().width;
    const file = `${String(this.n).padStart(2, '0')}-${name}-${width}.png`;
    // Let transitions of progress bars and badges settle.
    await page.waitForTimeout(150);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(this.dir, file), fullPage: true });
    // What the screen shows, beside its picture: the visible text, then one
    // line per landmark, heading, button, form field and image (role and
    // accessible name), so the test can check the content, not just a PNG.
    const shown = await page.evaluate(() => {
      const name = (el) => (el.getAttribute('aria-label') || el.getAttribute('alt') || el.textContent || el.getAttribute('name') || '').trim().replace(/\s+/g, ' ');
      const visible = (el) => el.getClientRects().length > 0;
      const lines = [];
      for (const el of document.querySelectorAll('h1, h2, h3, button, a[href], input, select, textarea, img, [role]')) {
        if (!visible(el)) continue;
        const role = el.getAttribute('role') || el.tagName.toLowerCase();
        lines.push(`element ${role}: ${name(el)}`);
      }
      return `${document.body.innerText}\n${lines.join('\n')}\n`;
    });
    writeFileSync(join(this.dir, file.replace(/\.png$/, '.txt')), shown);
    this.taken.push(file);
    console.log(`screenshot ${file}`);
    return file;
  }

  /** Takes the same view at phone width too, then returns to laptop width. */
  async both(page, name) {
    await this.take(page, name);
    await page.setViewportSize(PHONE);
    await assertNoSideScroll(page, name);
    await this.take(page, name);
    await page.setViewportSize(WIDE);
  }
}

/** Fails when the page scrolls sideways at its current width. */
export async function assertNoSideScroll(page, what) {
  const { scroll, width } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    width: window.innerWidth,
  }));
  if (scroll > width + 1) throw new Error(`${what}: the page scrolls sideways at ${width}px (content is ${scroll}px wide)`);
}

/** Waits until `fn()` (run in the test) resolves truthy; fails naming `what`. */
export async function until(what, fn, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e.message;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Signs in on `page` with `token`; resolves when the sessions page shows. */
export async function signIn(page, base, token) {
  await page.goto(`${base}/console/`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
}

/** Fails with the alert banner's text when the console shows an error. */
export async function assertNoAlert(page, when) {
  const alert = page.locator('#alert');
  if (await alert.isVisible()) throw new Error(`${when}: the console shows an error: ${await alert.innerText()}`);
}
