// The story's second half: a blast whose progress bar moves until it
// completes, a plugin uploaded and bound whose counters move, and the main
// pages at phone width.

import { PHONE, WIDE, assertNoAlert, assertNoSideScroll, until } from './browser.mjs';

/** Starts a blast to `recipients` and watches its bar move to the end. */
export async function blastChapter({ page, base, id, recipients, shots }) {
  await page.goto(`${base}/console/#/blasts`);
  await page.getByRole('heading', { name: 'Blasts', level: 1 }).waitFor();
  const form = page.getByRole('form', { name: 'Start a blast' });
  await form.getByLabel('From session').selectOption(id);
  await form.getByLabel('Message').fill('Spring sale: 20% off until Sunday!');
  await form.getByLabel('Recipients').fill(recipients.join('\n'));
  // A second between sends: the list refreshes every second, so the bar has
  // several values to show between empty and full.
  await form.getByLabel('Pause between sends (ms)').fill('1000');
  await form.getByRole('button', { name: 'Start blast' }).click();
  // The notice says what was started; it leaves after a few seconds, so it
  // is looked for now rather than in a later screenshot.
  await page.getByRole('status').filter({ hasText: `Blast started: ${recipients.length} recipients` }).waitFor();

  const job = page.locator('.blast').first();
  const bar = job.getByRole('progressbar');
  await bar.waitFor();
  const total = Number(await bar.getAttribute('aria-valuemax'));
  if (total !== recipients.length) throw new Error(`the blast has ${total} recipients, expected ${recipients.length}`);

  // Watch the bar: it must show progress between empty and full, never go
  // back, and end full with the job completed.
  const seen = [];
  let midShot = false;
  await until('the blast to complete', async () => {
    const now = Number(await bar.getAttribute('aria-valuenow'));
    if (seen.length && now < seen[seen.length - 1]) throw new Error(`the progress went back from ${seen.at(-1)} to ${now}`);
    if (!seen.includes(now)) seen.push(now);
    // The screenshot waits for the second value in between: taking it is
    // slow on a busy machine and must not hide the bar's movement.
    if (!midShot && seen.filter((v) => v > 0 && v < total).length >= 2) {
      midShot = true;
      await shots.take(page, 'blast-running');
    }
    return (await job.getAttribute('data-status')) === 'completed' && now === total;
  }, 30000);
  const between = seen.filter((v) => v > 0 && v < total);
  if (between.length < 2) throw new Error(`the progress bar did not move live: it showed ${JSON.stringify(seen)}`);
  console.log(`blast progress seen: ${JSON.stringify(seen)}`);
  const width = await bar.locator('.bar-sent').evaluate((el) => el.style.width);
  if (parseFloat(width) !== 100) throw new Error(`a completed blast's bar is ${width} wide`);
  await shots.both(page, 'blasts');

  await job.getByRole('link', { name: 'Recipients' }).click();
  await page.getByRole('navigation', { name: 'Recipients by status' }).getByRole('link', { name: 'sent', exact: true }).click();
  await until('every recipient listed as sent', async () => (await page.locator('tbody [data-status="sent"]').count()) === total);
  await assertNoAlert(page, 'on the blast page');
  await shots.take(page, 'blast-recipients');
}

/**
 * Uploads the keyword-router component, binds it as an event filter, and
 * sees its counters move as the sim tab injects messages.
 */
export async function pluginChapter({ page, simPage, base, wasm, shots }) {
  await page.goto(`${base}/console/#/plugins`);
  await page.getByRole('heading', { name: 'Plugins', level: 1 }).waitFor();
  const upload = page.getByRole('form', { name: 'Upload a plugin' });
  await upload.getByLabel('Component (.wasm)').setInputFiles(wasm);
  await upload.getByLabel('Name').fill('router');
  await upload.getByRole('button', { name: 'Upload plugin' }).click();
  const plugin = page.locator('[data-name="router"]');
  await plugin.locator('[data-status="active"]').waitFor();
  const calls = plugin.locator('[data-metric="calls"] dd');
  const drops = plugin.locator('[data-metric="drops"] dd');
  if ((await calls.innerText()) !== '0') throw new Error('a fresh plugin has made calls');

  const bind = page.getByRole('form', { name: 'Bind a plugin' });
  await bind.getByLabel('Plugin').selectOption({ label: await pluginLabel(plugin) });
  await bind.getByLabel('Hook').selectOption('event_filter');
  await bind.getByLabel('Configuration (JSON)').fill('{"keywords": ["order"], "mode": "keep"}');
  await bind.getByRole('button', { name: 'Bind plugin' }).click();
  await page.locator('tr[data-binding]').filter({ hasText: 'event_filter' }).waitFor();
  await assertNoAlert(page, 'after binding the plugin');

  const form = simPage.getByRole('form', { name: 'Inject inbound messages' });
  await form.getByLabel('How many').fill('1');
  await form.getByLabel('Text').fill('where is my order?');
  await form.getByRole('button', { name: 'Inject' }).click();
  await simPage.getByRole('region', { name: 'Inject inbound messages' }).getByText('1 message injected from 4915112345678.').waitFor();
  await form.getByLabel('Text').fill('just saying hello');
  await form.getByRole('button', { name: 'Inject' }).click();
  await simPage.getByRole('region', { name: 'Inject inbound messages' }).getByText('1 message injected from 4915112345678.').waitFor();

  await until('the plugin counters to move', async () => Number(await calls.innerText()) >= 2 && Number(await drops.innerText()) >= 1);
  await shots.both(page, 'plugins');
}

async function pluginLabel(plugin) {
  const title = await plugin.locator('h3').innerText();
  return title.replace(/\s+/g, ' ').trim();
}

/** The remaining pages at phone width, none scrolling sideways. */
export async function phoneChapter({ page, base, id, shots }) {
  await page.setViewportSize(PHONE);
  for (const [route, name] of [[`#/sessions/${id}/messages`, 'messages'], [`#/sessions/${id}/contacts`, 'contacts'], [`#/sim/${id}`, 'sim-panel']]) {
    await page.goto(`${base}/console/${route}`);
    await page.locator('h1').first().waitFor();
    await page.waitForTimeout(400);
    await assertNoSideScroll(page, name);
    await assertNoAlert(page, `on ${route}`);
    await shots.take(page, name);
  }
  await page.setViewportSize(WIDE);
  // The console follows the system's dark scheme.
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto(`${base}/console/#/blasts`);
  await page.getByRole('progressbar').first().waitFor();
  await shots.take(page, 'blasts-dark');
  await page.emulateMedia({ colorScheme: 'light' });
}
