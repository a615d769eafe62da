// Shared pieces of the interface: the error banner, notices, status
// badges, page headers and empty states.

import { h, replace } from './dom.js';
import { words } from './format.js';

/** Shows an error (an ApiError or any Error) in the page's alert banner. */
export function showError(err, context) {
  const banner = document.getElementById('alert');
  const code = err && err.code ? err.code : null;
  const message = err && err.message ? err.message : String(err);
  replace(banner,
    h('div', { class: 'alert-body' },
      h('strong', { text: context ? `${context} failed` : 'Something went wrong' }),
      h('p', { class: 'alert-message', text: message }),
      code ? h('p', { class: 'alert-code' }, 'Error code ', h('code', { text: code })) : null),
    h('button', {
      type: 'button', class: 'btn btn-ghost', 'aria-label': 'Dismiss the error',
      onclick: () => clearError(),
    }, '✕'));
  banner.hidden = false;
}

/** Hides the alert banner. */
export function clearError() {
  const banner = document.getElementById('alert');
  banner.hidden = true;
  banner.replaceChildren();
}

/**
 * Runs `fn`; an error is shown in the banner (prefixed with `context`) and
 * swallowed. Resolves to fn's result, or undefined after an error.
 */
export async function attempt(context, fn) {
  try {
    const result = await fn();
    return result;
  } catch (err) {
    showError(err, context);
    return undefined;
  }
}

/** A short-lived notice in the polite live region. */
export function notify(text) {
  const region = document.getElementById('notices');
  const note = h('div', { class: 'notice', role: 'status', text });
  region.append(note);
  setTimeout(() => note.remove(), 4000);
}

const TONES = {
  logged_in: 'ok', connected: 'ok', active: 'ok', completed: 'ok', sent: 'ok', closed: 'ok', live: 'ok',
  connecting: 'busy', waiting_for_qr: 'busy', waiting_for_pair_code: 'busy', running: 'busy',
  pending: 'busy', sending: 'busy', probing: 'busy',
  disconnected: 'idle', paused: 'idle', cancelled: 'idle', skipped_dup: 'idle', off: 'idle',
  quarantined: 'bad', failed: 'bad', dlq: 'bad', completed_with_failures: 'warn', open: 'bad', error: 'bad',
};

/** A status badge: a coloured dot and the status in words. */
export function badge(status, label) {
  const tone = TONES[status] || 'idle';
  return h('span', { class: `badge badge-${tone}`, dataset: { status } },
    h('span', { class: 'dot', 'aria-hidden': 'true' }), label || words(status));
}

/** The page's title row with optional actions on the right. */
export function pageHeader(title, subtitle, ...actions) {
  return h('header', { class: 'page-header' },
    h('div', {},
      h('h1', { text: title, tabindex: '-1' }),
      subtitle ? h('p', { class: 'subtitle', text: subtitle }) : null),
    actions.length ? h('div', { class: 'actions' }, actions) : null);
}

/** A titled card section. */
export function card(title, ...children) {
  return h('section', { class: 'card', 'aria-label': title },
    title ? h('h2', { text: title }) : null, children);
}

/** What to show when a list is empty. */
export function empty(text) {
  return h('p', { class: 'empty', text });
}
