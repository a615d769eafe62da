// A session's stored data, one tab each: message history, the contacts
// directory (searchable), and the groups its account is in.

import { fetchBlob, get, seg } from '../api.js';
import { button, field, h, input, refresh, replace, table, td } from '../dom.js';
import { phone, when } from '../format.js';
import { every } from '../poll.js';
import { attempt, empty } from '../ui.js';

/** The message history, newest first, refreshed every few seconds. */
export function messagesTab(panel, id) {
  const body = h('div');
  panel.append(h('h2', { text: 'Messages' }), body);
  return every(3000, async () => {
    const res = await attempt('Loading messages', () => get(`/sessions/${seg(id)}/messages?limit=100`));
    if (!res) return;
    refresh(body, res.messages, () => (res.messages.length === 0 ? empty('No messages stored yet.') : table(['Time', 'Direction', 'Chat', 'Kind', 'Content'], res.messages, (m) => h('tr', {},
      td('Time', when(m.timestamp)),
      td('Direction', h('span', { class: `dir dir-${m.direction}`, text: m.direction === 'inbound' ? '\u2193 in' : '\u2191 out' })),
      td('Chat', h('span', { class: 'mono', text: phone(m.chat) })),
      td('Kind', m.kind),
      td('Content', content(m))))));
  });
}

function content(m) {
  const b = m.body || {};
  const who = m.direction === 'inbound' && b.push_name ? `${b.push_name}: ` : '';
  const text = who + (b.text || b.caption || b.title || b.name || (b.media ? '' : JSON.stringify(b).slice(0, 120)));
  return b.media ? h('span', {}, text, text ? ' ' : '', mediaLink(b.media)) : text;
}

/** An inbound media's link: opens the bytes (fetched with the token), or says why it cannot. */
function mediaLink(media) {
  const name = media.filename || media.mimetype;
  if (media.state === 'failed') {
    return h('span', { class: 'media-failed', title: media.error || '', text: `\u26a0 ${name}: download failed` });
  }
  return button(`Open ${name}`, async (ev) => {
    const target = ev.currentTarget;
    try {
      const blob = await fetchBlob(media.url);
      window.open(URL.createObjectURL(blob), '_blank', 'noopener');
    } catch (e) {
      target.title = e.message;
      target.textContent = `\u26a0 ${e.message}`;
    }
  }, { class: 'btn media-link', 'aria-label': `Open media ${name}` });
}

/** The contacts directory with a search box (a substring of names or phone). */
export function contactsTab(panel, id) {
  const results = h('div');
  const search = input('q', { type: 'search', placeholder: 'Name or phone' });
  let timer = null;
  let seq = 0;
  const load = async () => {
    const mine = ++seq;
    const q = encodeURIComponent(search.value.trim());
    const res = await attempt('Searching contacts', () => get(`/sessions/${seg(id)}/contacts?q=${q}&limit=200`));
    if (!res || mine !== seq) return;
    if (res.contacts.length === 0) {
      replace(results, empty(search.value ? 'No contact matches.' : 'The directory is empty: contacts are learned from address-book syncs and incoming chats.'));
      return;
    }
    replace(results,
      h('p', { class: 'muted', text: `${res.total} contact${res.total === 1 ? '' : 's'}` }),
      table(['Phone', 'Name', 'Push name', 'Business', 'Source', 'Updated'], res.contacts, (c) => h('tr', {},
        td('Phone', h('span', { class: 'mono', text: `+${c.phone}` })),
        td('Name', c.full_name || c.first_name || '—'),
        td('Push name', c.push_name || '—'),
        td('Business', c.business_name || '—'),
        td('Source', c.source),
        td('Updated', c.updated_at))));
  };
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(load, 250);
  });
  panel.append(h('h2', { text: 'Contacts' }),
    h('div', { class: 'toolbar' }, field('Search contacts', search)), results);
  load();
  return () => clearTimeout(timer);
}

/** The groups the session's account is in (needs a logged-in session). */
export function groupsTab(panel, id) {
  const body = h('div');
  panel.append(h('h2', { text: 'Groups' }), body);
  (async () => {
    try {
      const res = await get(`/sessions/${seg(id)}/groups`);
      if (res.groups.length === 0) {
        replace(body, empty('The account is in no group.'));
        return;
      }
      replace(body, table(['Name', 'Group', 'Members'], res.groups, (g) => h('tr', {},
        td('Name', g.name || '—'),
        td('Group', h('span', { class: 'mono', text: g.jid })),
        td('Members', String(g.participant_count)))));
    } catch (e) {
      replace(body, h('p', { class: 'form-error', text: `Groups are not available: ${e.message}` }));
    }
  })();
  return () => {};
}
