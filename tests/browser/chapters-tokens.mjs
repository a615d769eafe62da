// The story's last chapter: the admin mints a token that may only read one
// session; a second tab signs in with it and the console shows that
// session alone, and none of what the token may not do. The admin's tab
// still shows everything, and revoking the token signs the second tab out.

import { assertNoAlert, signIn, until } from './browser.mjs';

/** Calls the gateway's API with the admin token; resolves to the JSON answer. */
async function api({ base, token }, method, path, body) {
  const resp = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await resp.text();
  if (!resp.ok) throw new Error(`${method} ${path} answered ${resp.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Fails unless `locator` matches nothing: `what` names it in the error. */
async function absent(locator, what) {
  const n = await locator.count();
  if (n !== 0) throw new Error(`${what} is shown (${n}), but the token may not use it`);
}

/** Fails unless `locator` matches something visible. */
async function present(locator, what) {
  if (!(await locator.first().isVisible())) throw new Error(`${what} is not shown`);
}

/**
 * A read-only token over `id`: only that session, no create form, no
 * plugins or sim navigation, no lifecycle, blast or webhook actions; the
 * pages it may not use say so. `viewerPage` is a tab of its own.
 */
export async function scopedTokenChapter(ctx) {
  const { page, viewerPage: viewer, base, id, shots } = ctx;
  // A second session, which the token must not see.
  await api(ctx, 'POST', '/sessions', { id: 'other', name: 'Other line' });
  const minted = await api(ctx, 'POST', '/tokens', { name: 'viewer', sessions: [id], scopes: ['read'] });
  if (!minted.secret?.startsWith('sbt_')) throw new Error(`the mint answered no secret: ${JSON.stringify(minted)}`);

  await signIn(viewer, base, minted.secret);
  await viewer.locator('#whoami [data-token="viewer"]').waitFor();
  const cards = viewer.locator('[data-session]');
  await cards.first().waitFor();
  await until('the session list to settle', async () => (await cards.count()) === 1);
  await viewer.locator(`[data-session="${id}"] [data-status="logged_in"]`).waitFor();
  await viewer.getByText('1 session, 1 online').waitFor();
  await absent(viewer.locator('[data-session="other"]'), 'the session outside the token');
  await absent(viewer.getByRole('form', { name: 'Create a session' }), 'the create-session form');
  await absent(cards.getByRole('button'), 'an action on the session card');
  const nav = viewer.getByRole('navigation', { name: 'Console' });
  for (const name of ['Sessions', 'Webhooks', 'Blasts']) await present(nav.getByRole('link', { name }), `the ${name} link`);
  for (const name of ['Plugins', 'Sim network']) await absent(nav.getByRole('link', { name }), `the ${name} link`);
  await assertNoAlert(viewer, 'on the viewer\u2019s sessions');
  await shots.both(viewer, 'sessions-as-viewer');

  // The session page: facts and the live tail, no lifecycle action.
  await viewer.goto(`${base}/console/#/sessions/${id}/events`);
  await viewer.locator('.session-detail-head [data-status="logged_in"]').waitFor();
  await viewer.locator('.tail-state [data-status="live"]').waitFor();
  await absent(viewer.locator('[data-action]'), 'a session action');
  await absent(viewer.getByRole('button', { name: /^(Pair|Connect|Disconnect|Log out|Delete|Resume)/ }), 'a lifecycle button');
  await viewer.goto(`${base}/console/#/sessions/${id}/messages`);
  await viewer.locator('.tab-panel table, .tab-panel .empty').first().waitFor();
  await assertNoAlert(viewer, 'on the viewer\u2019s session page');
  await shots.take(viewer, 'session-as-viewer');

  // Blasts and webhooks can be looked at, not started, cancelled or changed.
  await viewer.goto(`${base}/console/#/blasts`);
  await viewer.locator('.blast').first().waitFor();
  await absent(viewer.getByRole('form', { name: 'Start a blast' }), 'the blast form');
  await absent(viewer.locator('.blast [data-action]'), 'a blast action');
  await viewer.goto(`${base}/console/#/webhooks/${id}`);
  await viewer.locator('.hook').first().waitFor();
  await absent(viewer.getByRole('form', { name: 'Register a webhook' }), 'the webhook form');
  await absent(viewer.locator('.hook').getByRole('button'), 'a webhook action');
  await assertNoAlert(viewer, 'on the viewer\u2019s webhooks');

  // Pages reached by URL that the token may not use say so, calling nothing.
  for (const [route, why] of [
    ['#/plugins', 'it needs the admin scope'],
    [`#/sim/${id}`, 'it needs the admin scope'],
    ['#/sessions/other/events', 'session other is not among its sessions'],
  ]) {
    await viewer.goto(`${base}/console/${route}`);
    await viewer.locator('.refusal').filter({ hasText: why }).waitFor();
    await absent(viewer.getByRole('form'), `a form on ${route}`);
    await assertNoAlert(viewer, `on ${route}`);
  }
  await shots.take(viewer, 'refused-as-viewer');

  // A reload keeps the token and reads again what it may do.
  await viewer.goto(`${base}/console/#/sessions`);
  await viewer.reload();
  await viewer.locator(`[data-session="${id}"]`).waitFor();
  await absent(viewer.getByRole('form', { name: 'Create a session' }), 'the create-session form after a reload');
  await absent(nav.getByRole('link', { name: 'Plugins' }), 'the Plugins link after a reload');

  // The admin's tab still sees and may do everything.
  await page.goto(`${base}/console/#/sessions`);
  await page.locator('#whoami [data-token="admin"]').waitFor();
  await page.locator('[data-session="other"]').waitFor();
  await page.locator(`[data-session="${id}"] [data-action="logout"]`).waitFor();
  await present(page.getByRole('form', { name: 'Create a session' }), 'the admin\u2019s create-session form');
  const adminNav = page.getByRole('navigation', { name: 'Console' });
  for (const name of ['Plugins', 'Sim network']) await present(adminNav.getByRole('link', { name }), `the admin\u2019s ${name} link`);
  await shots.take(page, 'sessions-as-admin');

  // Revoked, the token is refused at its next call: the tab signs out.
  await api(ctx, 'DELETE', `/tokens/${minted.token.id}`);
  await viewer.getByRole('heading', { name: 'Sign in to Switchboard' }).waitFor();
  const kept = await viewer.evaluate(() => sessionStorage.getItem('switchboard.token'));
  if (kept !== null) throw new Error('a revoked token stays kept in the tab');
}
