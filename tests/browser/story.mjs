// The console's browser story, run by tests/console/main.rs against a real
// gateway (sim network), a real webhook receiver and a real plugin:
//
//   sign in → create a sim session → pair it by QR → register a webhook →
//   inject inbound messages and see them in the live tail → open a photo a
//   customer sent from the message history → run a blast and
//   watch it complete → upload a plugin and see its counters move → sign a
//   second tab in with a read-only token over one session and see only what
//   it may do
//
// Environment: CONSOLE_BASE (http://127.0.0.1:port), CONSOLE_TOKEN,
// CONSOLE_RECEIVER (webhook URL), CONSOLE_PLUGIN (path of a .wasm),
// CONSOLE_ARTIFACTS (screenshot directory), CHROMIUM (executable).
// Exits 0 when every step passed; prints the screenshots it saved.

import { Shots, env, launch } from './browser.mjs';
import { createSessionChapter, mediaChapter, pairChapter, signInChapter, tailChapter, webhookChapter } from './chapters-sessions.mjs';
import { blastChapter, phoneChapter, pluginChapter } from './chapters-ops.mjs';
import { scopedTokenChapter } from './chapters-tokens.mjs';

const base = env('CONSOLE_BASE');
const token = env('CONSOLE_TOKEN');
const receiver = env('CONSOLE_RECEIVER');
const wasm = env('CONSOLE_PLUGIN');
const shots = new Shots(env('CONSOLE_ARTIFACTS'));
const id = 'demo';

const context = await launch(env('CHROMIUM'));
const page = await context.newPage();
const simPage = await context.newPage();
// A tab of its own keeps its own sessionStorage, so its own token.
const viewerPage = await context.newPage();
const errors = [];
for (const p of [page, simPage, viewerPage]) {
  p.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  p.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console error: ${m.text()} (${m.location().url})`);
  });
}

const step = async (name, fn) => {
  const started = Date.now();
  try {
    await fn();
  } catch (e) {
    await shots.take(page, `failed-${name}`).catch(() => {});
    await shots.take(simPage, `failed-${name}-sim`).catch(() => {});
    await shots.take(viewerPage, `failed-${name}-viewer`).catch(() => {});
    throw new Error(`step "${name}" failed: ${e.message}`);
  }
  console.log(`ok ${name} (${Date.now() - started} ms)`);
};

try {
  const ctx = { page, simPage, viewerPage, base, token, id, receiver, wasm, shots };
  await step('sign in', () => signInChapter(ctx));
  await step('create a sim session', () => createSessionChapter(ctx));
  await step('pair it by QR code', () => pairChapter(ctx));
  await step('register a webhook', () => webhookChapter(ctx));
  await step('see injected messages in the live tail', () => tailChapter({
    ...ctx,
    webhookShot: (p) => shots.both(p, 'webhooks'),
  }));
  await step('open a photo a customer sent', () => mediaChapter(ctx));
  const recipients = ['+49 151 0000 0001', '+49 151 0000 0002', '+49 151 0000 0003', '+49 151 0000 0004',
    '+49 151 0000 0005', '+49 151 0000 0006', '+49 151 0000 0007', '+49 151 0000 0008'];
  await step('run a blast and watch it complete', () => blastChapter({ ...ctx, recipients }));
  await step('upload a plugin and see its counters move', () => pluginChapter(ctx));
  await step('the other pages at phone width', () => phoneChapter(ctx));
  await step('a read-only token over one session sees only what it may', () => scopedTokenChapter(ctx));
  // Failed API calls show in the banner, not as console errors: a console
  // error is a bug of the console itself. A 401 is the browser's own
  // network log line, expected: the wrong token's, and the revoked one's.
  // A 403 or 404 would be the console calling a route the token may not use.
  const unexpected = errors.filter((e) => !e.includes('401'));
  if (unexpected.length) throw new Error(`the console logged errors:\n${unexpected.join('\n')}`);
  console.log(`story passed; ${shots.taken.length} screenshots in ${shots.dir}`);
} catch (e) {
  console.error(e.message);
  process.exitCode = 1;
} finally {
  await context.close();
}
