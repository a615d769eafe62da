// One session: its state and actions, and tabs for the live event tail,
// the message history, the contacts directory and the groups.

import { get, seg } from '../api.js';
import { h, replace } from '../dom.js';
import { phone, when } from '../format.js';
import { every } from '../poll.js';
import { href } from '../router.js';
import { attempt, badge, pageHeader } from '../ui.js';
import { sessionActions } from './session-actions.js';
import { contactsTab, groupsTab, messagesTab } from './session-data.js';
import { eventTail } from './tail.js';

const TABS = [
  ['events', 'Live events'],
  ['messages', 'Messages'],
  ['contacts', 'Contacts'],
  ['groups', 'Groups'],
];

/** Renders the session page with the tab `params.tab`. */
export function render(page, { id, tab }) {
  const head = h('div', { class: 'session-detail-head' });
  const facts = h('dl', { class: 'facts facts-wide' });
  const actions = h('div', { class: 'actions' });
  let last = '';

  const load = async () => {
    if (document.querySelector('dialog[open]')) return;
    const s = await attempt(`Loading session ${id}`, () => get(`/sessions/${seg(id)}`));
    if (!s) return;
    // The route the session's connections take (its own proxy or the
    // gateway's default); never its credentials, which no answer carries.
    const route = await get(`/sessions/${seg(id)}/proxy`).catch(() => null);
    const key = JSON.stringify([s, route]);
    if (key === last) return;
    last = key;
    replace(head, badge(s.status), s.paused ? badge('paused') : null);
    replace(facts,
      fact('Phone', phone(s.jid || s.phone_number), true),
      fact('Push name', s.push_name || '—'),
      fact('Network', s.network),
      fact('Auto-reconnect', s.auto_reconnect ? 'on' : 'off'),
      fact('Proxy', proxyText(route), true),
      fact('Created', when(s.created_at)),
      s.last_error ? fact('Last error', s.last_error) : null);
    replace(actions, sessionActions(s, load));
  };

  const tabs = h('nav', { class: 'tabs', 'aria-label': 'Session views' },
    h('ul', {}, TABS.map(([key, label]) => h('li', {},
      h('a', { href: href('sessions', id, key), 'aria-current': key === tab ? 'page' : false, text: label })))));
  const panel = h('section', { class: 'tab-panel card', 'aria-label': TABS.find(([k]) => k === tab)?.[1] || '' });

  let closeTab = () => {};
  if (tab === 'messages') closeTab = messagesTab(panel, id);
  else if (tab === 'contacts') closeTab = contactsTab(panel, id);
  else if (tab === 'groups') closeTab = groupsTab(panel, id);
  else {
    const tail = eventTail(id);
    panel.append(tail.el);
    closeTab = tail.close;
  }

  page.append(
    h('p', { class: 'crumbs' }, h('a', { href: href('sessions'), text: 'Sessions' }), ' / ', id),
    pageHeader(id, null),
    head, facts, actions, tabs, panel);
  const stop = every(3000, load);
  return () => {
    stop();
    closeTab();
  };
}

/** The session's route as the facts show it: the proxy and where it comes from. */
function proxyText(route) {
  if (!route) return '—';
  if (!route.effective) return route.source === 'session' ? 'direct (set for this session)' : 'direct';
  const creds = route.effective.credentials ? ', with credentials' : '';
  const from = route.source === 'default' ? 'gateway default' : 'this session';
  return `${route.effective.url} (${from}${creds})`;
}

function fact(label, value, mono) {
  return h('div', {}, h('dt', { text: label }), h('dd', { class: mono ? 'mono' : null, text: value }));
}
