// A session picker for pages that work on one session at a time (webhooks,
// sim network): the chosen session is part of the route, so it survives a
// reload.

import { get } from '../api.js';
import { field, h, select } from '../dom.js';
import { go } from '../router.js';
import { empty, showError } from '../ui.js';

/**
 * Loads the sessions and resolves to `{el, session}` — the picker, and the
 * chosen session (the route's, else the first; null when there is none).
 * Choosing another navigates to `#/<route>/<id>`.
 */
export async function pickSession(route, id) {
  let sessions = [];
  try {
    sessions = (await get('/sessions')).sessions;
  } catch (e) {
    showError(e, 'Loading sessions');
  }
  if (sessions.length === 0) {
    return { el: empty('No sessions yet: create one on the Sessions page first.'), session: null };
  }
  const session = sessions.find((s) => s.id === id) || sessions[0];
  const picker = select('session', sessions.map((s) => [s.id, `${s.id} (${s.status.replaceAll('_', ' ')})`]), session.id);
  picker.addEventListener('change', () => go(route, picker.value));
  return { el: h('div', { class: 'toolbar' }, field('Session', picker)), session };
}
