// Sessions: every linked account at a glance (those the token may see),
// creating one, and the actions on each (pairing opens a dialog with the QR
// code); creating and acting need the `manage` scope.

import { get, post } from '../api.js';
import { can, joined } from '../auth.js';
import { field, form, h, input, refresh, select } from '../dom.js';
import { phone, when } from '../format.js';
import { every } from '../poll.js';
import { href } from '../router.js';
import { attempt, badge, card, empty, notify, pageHeader } from '../ui.js';
import { sessionActions } from './session-actions.js';

/** Renders the sessions page. */
export function render(page) {
  const list = h('div', { class: 'session-grid', 'aria-live': 'off' });
  const summary = h('p', { class: 'subtitle' });
  let paused = false;

  const load = async () => {
    // While a pairing dialog is open the list stays still under it.
    if (paused || document.querySelector('dialog[open]')) return;
    const body = await attempt('Loading sessions', () => get('/sessions'));
    if (!body) return;
    const sessions = body.sessions;
    const online = sessions.filter((s) => s.status === 'logged_in').length;
    summary.textContent = `${sessions.length} session${sessions.length === 1 ? '' : 's'}, ${online} online`;
    refresh(list, sessions, () => (sessions.length === 0
      ? empty(can('manage') ? 'No sessions yet. Create one below, then pair it with a phone.' : 'No sessions this token may see yet.')
      : sessions.map((s) => sessionCard(s, load))));
  };

  const idInput = input('id', { placeholder: 'alice', maxlength: 64 });
  const createForm = form({ class: 'inline-form', 'aria-label': 'Create a session' }, async (v, el) => {
    const bodyIn = {};
    for (const key of ['id', 'name', 'network', 'phone']) if (v[key]?.trim()) bodyIn[key] = v[key].trim();
    paused = true;
    const created = await attempt('Creating the session', () => post('/sessions', bodyIn));
    paused = false;
    if (created) {
      joined(created.id);
      el.reset();
      notify(`Session ${created.id} created`);
      await load();
    }
  },
  field('Session id', idInput, 'Letters, digits, _ - . ; empty for a generated id.'),
  field('Name', input('name', { placeholder: 'Support line' })),
  field('Network', select('network', [['', 'Gateway default'], ['whatsapp', 'WhatsApp'], ['sim', 'Simulated']], ''),
    'Where the account lives; the simulated network needs no phone.'),
  field('Phone (sim only)', input('phone', { inputmode: 'tel', placeholder: '+1 555 000 1111' })),
  h('button', { type: 'submit', class: 'btn btn-primary', text: 'Create session' }));

  page.append(pageHeader('Sessions', null), summary, list);
  if (can('manage')) page.append(card('New session', createForm));
  return every(2000, load);
}

/** One session's card: who, state, and what can be done now. */
function sessionCard(s, refresh) {
  const title = s.name && s.name !== s.id ? s.name : s.id;
  return h('article', { class: 'session-card card', dataset: { session: s.id }, 'aria-label': `Session ${s.id}` },
    h('header', { class: 'session-head' },
      h('div', {},
        h('h2', {}, h('a', { href: href('sessions', s.id), text: title })),
        title !== s.id ? h('p', { class: 'muted mono', text: s.id }) : null),
      h('div', { class: 'badges' }, badge(s.status), s.paused ? badge('paused') : null)),
    h('dl', { class: 'facts' },
      h('div', {}, h('dt', { text: 'Phone' }), h('dd', { class: 'mono', text: phone(s.jid || s.phone_number) })),
      h('div', {}, h('dt', { text: 'Network' }), h('dd', { text: s.network })),
      h('div', {}, h('dt', { text: 'Created' }), h('dd', { text: when(s.created_at) }))),
    s.last_error ? h('p', { class: 'last-error', text: `Last error: ${s.last_error}` }) : null,
    h('div', { class: 'actions' }, sessionActions(s, refresh, { afterDelete: refresh })));
}
