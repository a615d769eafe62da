// The story's first half: sign in, create a sim session, pair it by QR
// code, register a webhook, see injected messages arrive in the live tail.

import { assertNoAlert, signIn, until } from './browser.mjs';

/** A wrong token is refused with a clear error; the right one signs in. */
export async function signInChapter({ page, base, token, shots }) {
  await page.goto(`${base}/console/`);
  await page.getByRole('heading', { name: 'Sign in to Switchboard' }).waitFor();
  await shots.both(page, 'sign-in');
  await page.getByLabel('API token').fill('not-the-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const alert = page.getByRole('alert').filter({ hasText: 'did not accept this token' });
  await alert.waitFor();
  await shots.take(page, 'sign-in-refused');
  // Keyboard only: the token field has focus after a refusal; Enter submits.
  const focused = await page.evaluate(() => document.activeElement?.getAttribute('name'));
  if (focused !== 'token') throw new Error(`after a refusal the focus is on ${focused}, not the token field`);
  await page.keyboard.press('Control+A');
  await page.keyboard.type(token);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Sessions', level: 1 }).waitFor();
  // Focus moves to the new page's title; the shell's controls come before it.
  const active = () => page.evaluate(() => `${document.activeElement?.tagName} ${document.activeElement?.textContent.trim()}`);
  await until('focus on the page title', async () => (await active()) === 'H1 Sessions');
  await page.keyboard.press('Shift+Tab');
  if ((await active()) !== 'BUTTON Sign out') throw new Error(`Shift+Tab from the title reached ${await active()}`);
  const stored = await page.evaluate(() => [sessionStorage.getItem('switchboard.token'), localStorage.length]);
  if (stored[0] !== token || stored[1] !== 0) throw new Error(`the token must live in sessionStorage only, got ${JSON.stringify(stored)}`);
}

/** Creates `id` from the form; its card shows it disconnected. */
export async function createSessionChapter({ page, id }) {
  const form = page.getByRole('form', { name: 'Create a session' });
  await form.getByLabel('Session id').fill(id);
  await form.getByLabel('Name').fill('Demo line');
  await form.getByLabel('Phone (sim only)').fill('+1 555 000 1111');
  await form.getByRole('button', { name: 'Create session' }).click();
  const card = page.locator(`[data-session="${id}"]`);
  await card.locator('[data-status="disconnected"]').waitFor();
  await assertNoAlert(page, 'after creating a session');
  return card;
}

/** Pairs `id` by QR: the image shows, is redrawn as codes rotate, and a scan pairs it. */
export async function pairChapter({ page, id, shots }) {
  const card = page.locator(`[data-session="${id}"]`);
  await card.getByRole('button', { name: `Pair ${id} with a QR code` }).click();
  const dialog = page.getByRole('dialog', { name: `Pair ${id} with a QR code` });
  const img = dialog.getByRole('img', { name: /QR code to link/ });
  await img.waitFor();
  const first = await img.getAttribute('data-qr');
  const src = await img.getAttribute('src');
  if (!src.startsWith('data:image/gif;base64,')) throw new Error(`the QR code is not an image: ${src.slice(0, 40)}`);
  const natural = await img.evaluate((el) => el.naturalWidth);
  if (natural < 100) throw new Error(`the QR image did not decode (natural width ${natural})`);
  await shots.take(page, 'pairing-qr');
  // The sim rotates its code; the console redraws the image.
  await until('the QR code to rotate', async () => (await img.getAttribute('data-qr')) !== first, 10000);
  await dialog.getByRole('button', { name: 'Simulate the phone\u2019s scan' }).click();
  await dialog.getByText(`Paired: ${id} is linked to +15550001111.`).waitFor();
  await shots.take(page, 'pairing-done');
  await dialog.getByRole('button', { name: 'Done' }).click();
  await card.locator('[data-status="logged_in"]').waitFor();
  await shots.both(page, 'sessions');
}

/** Registers the receiver's URL; the webhook shows a closed circuit. */
export async function webhookChapter({ page, id, receiver, shots }) {
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
  await page.getByLabel('Session', { exact: true }).selectOption(id);
  const form = page.getByRole('form', { name: 'Register a webhook' });
  await form.getByLabel('URL').fill(receiver);
  await form.getByLabel('Secret').fill('s3cret');
  await form.getByRole('button', { name: 'Register webhook' }).click();
  const hook = page.locator('.hook').filter({ hasText: receiver });
  await hook.waitFor();
  await assertNoAlert(page, 'after registering a webhook');
}

/**
 * Opens the session's live tail on `page`, injects messages from the sim
 * panel in a second tab, and sees them appear live; filters by event name.
 */
export async function tailChapter({ page, simPage, base, token, id, shots, webhookShot }) {
  await page.goto(`${base}/console/#/sessions/${id}/events`);
  await page.locator('.tail-state [data-status="live"]').waitFor();

  await signIn(simPage, base, token);
  await simPage.goto(`${base}/console/#/sim/${id}`);
  const form = simPage.getByRole('form', { name: 'Inject inbound messages' });
  await form.getByLabel('Push name').fill('Greta');
  await form.getByLabel('Text').fill('Is my order ready?');
  await form.getByLabel('How many').fill('3');
  await form.getByRole('button', { name: 'Inject' }).click();
  await simPage.getByRole('region', { name: 'Inject inbound messages' }).getByText('3 messages injected from 4915112345678.').waitFor();
  await shots.take(simPage, 'sim-panel');

  const messages = page.locator('.tail-row[data-event="message"]');
  await until('three messages in the live tail', async () => (await messages.count()) >= 3);
  for (const n of [1, 2, 3]) {
    await messages.filter({ hasText: `Greta: Is my order ready? (${n}/3)` }).waitFor();
  }
  await shots.both(page, 'live-tail');

  const show = page.getByLabel('Show');
  await show.selectOption('connected');
  await until('the filter to hide messages', async () => (await messages.count()) === 0);
  await show.selectOption('message');
  await until('the filter to show only messages', async () => {
    const all = await page.locator('.tail-row').count();
    return all >= 3 && all === (await messages.count());
  });
  await show.selectOption('');

  await page.goto(`${base}/console/#/webhooks/${id}`);
  const failures = page.locator('.hook [data-metric="failures"]');
  await until('the webhook to report deliveries', async () => (await failures.innerText()) === '0');
  const backlog = page.locator('.hook [data-metric="backlog"]');
  await until('the webhook to show an empty backlog', async () => (await backlog.innerText()) === '0 pending');
  await webhookShot(page);
}

/** A one-pixel PNG, as a customer's photo. */
const PHOTO = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/**
 * A customer sends a photo (injected through the sim's API); the message
 * history shows it with a button that opens the bytes the gateway stored,
 * fetched with the token (a plain link could not carry it).
 */
export async function mediaChapter({ page, base, token, id, shots }) {
  const resp = await fetch(`${base}/api/v1/sim/sessions/${id}/inbound`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ from: '4915112345678', push_name: 'Greta', message_type: 'image', caption: 'The parcel', media: { data: PHOTO, mimetype: 'image/png' } }),
  });
  if (!resp.ok) throw new Error(`injecting a photo answered ${resp.status}: ${await resp.text()}`);
  await page.goto(`${base}/console/#/sessions/${id}/messages`);
  const open = page.getByRole('button', { name: 'Open media image/png' }).first();
  await open.waitFor();
  await shots.take(page, 'messages-media');
  const [tab] = await Promise.all([page.context().waitForEvent('page'), open.click()]);
  await tab.waitForLoadState();
  if (!tab.url().startsWith('blob:')) throw new Error(`the photo opened at ${tab.url()}, not from the fetched bytes`);
  await tab.close();
}
