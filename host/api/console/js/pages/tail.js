// The live event tail: a session's envelopes as they happen, read from the
// event stream, newest first, filterable by event name, pausable.

import { can } from '../auth.js';
import { button, field, h, replace, select } from '../dom.js';
import { clock, phone } from '../format.js';
import { openStream } from '../stream.js';
import { badge } from '../ui.js';

/** Event names the gateway publishes (docs/api.md, Events). */
export const EVENT_NAMES = [
  'message', 'receipt', 'presence', 'chat_presence', 'connected', 'disconnected', 'logged_out',
  'qr_code', 'pair_code', 'pairing_code_error', 'group_update', 'joined_group', 'picture_update',
  'user_about_update', 'push_name_update', 'contact_update', 'device_list_update', 'pin_update',
  'mute_update', 'archive_update', 'mark_chat_as_read', 'star_update', 'chat_deleted', 'chat_cleared',
  'message_deleted_for_me', 'status_mute_update', 'label_update', 'label_association',
  'contact_number_changed', 'identity_change', 'disappearing_mode_update', 'call', 'history_sync', 'poll_vote', 'ephemeral_setting',
  'undecryptable_message', 'client_outdated', 'offline_sync_preview', 'offline_sync_completed',
  'account_locked', 'reach_out_timelock', 'reconnect_scheduled', 'call_log_sync', 'stream_error', 'enc_decrypt_failed', 'app_state_sync_failed',
  'newsletter_live_update', 'blast_progress', 'blast_completed', 'storage_failed', 'storage_recovered',
];

const KEEP = 300;

/** The tail of `sessionId`'s events. Returns `{el, close}`. */
export function eventTail(sessionId) {
  const kept = [];
  let filter = '';
  let paused = false;
  const list = h('ol', { class: 'tail', 'aria-label': 'Events, newest first' });
  const state = h('span', { class: 'tail-state' }, badge('connecting'));
  const counter = h('span', { class: 'muted' });

  const matching = () => kept.filter((e) => !filter || e.event === filter);
  const updateCounter = () => {
    counter.textContent = `${matching().length} shown of ${kept.length} received`;
  };
  const draw = () => {
    const shown = matching();
    updateCounter();
    if (shown.length === 0) {
      replace(list, h('li', { class: 'empty' }, filter
        ? `No ${filter} events yet. They appear here the moment they happen.`
        : `No events yet. They appear here the moment they happen${can('admin') ? ': inject a message from the Sim network page to try' : ''}.`));
      return;
    }
    replace(list, shown.map(row));
  };

  const filterSelect = select('event', [['', 'All events'], ...EVENT_NAMES.map((n) => [n, n])], '');
  filterSelect.addEventListener('change', () => {
    filter = filterSelect.value;
    draw();
  });
  const pauseBtn = h('button', { type: 'button', class: 'btn', 'aria-pressed': 'false', text: 'Pause' });
  pauseBtn.addEventListener('click', () => {
    paused = !paused;
    pauseBtn.setAttribute('aria-pressed', String(paused));
    pauseBtn.textContent = paused ? 'Resume' : 'Pause';
    if (!paused) draw();
  });

  const stream = openStream({
    session: sessionId,
    onEvent: ({ event, envelope }) => {
      const item = { event, envelope, at: envelope.timestamp || Math.floor(Date.now() / 1000) };
      kept.unshift(item);
      if (kept.length > KEEP) kept.length = KEEP;
      if (paused) return;
      if (filter && event !== filter) {
        updateCounter();
        return;
      }
      // Prepend instead of redrawing, so an envelope opened for reading
      // stays open while others arrive.
      list.querySelector('.empty')?.remove();
      list.prepend(row(item));
      while (list.children.length > KEEP) list.lastChild.remove();
      updateCounter();
    },
    onState: (s, detail) => {
      replace(state, badge(s, s === 'live' ? 'live' : s === 'error' ? `stream error: ${detail}` : 'connecting'));
    },
  });

  const el = h('div', { class: 'tail-wrap' },
    h('div', { class: 'toolbar' },
      field('Show', filterSelect),
      h('div', { class: 'toolbar-buttons' }, pauseBtn, button('Clear', () => {
        kept.length = 0;
        draw();
      })),
      h('div', { class: 'toolbar-status' }, state, counter)),
    list);
  draw();
  return { el, close: () => stream.close() };
}

/** One event: time, name, a one-line summary and the whole envelope on demand. */
function row({ event, envelope, at }) {
  return h('li', { class: 'tail-row', dataset: { event } },
    h('time', { class: 'mono muted', text: clock(at) }),
    h('span', { class: `event-name event-${event}`, text: event }),
    h('span', { class: 'tail-summary', text: summary(event, envelope.data || {}) }),
    h('details', {},
      h('summary', { text: 'Envelope' }),
      h('pre', { class: 'json', text: JSON.stringify(envelope, null, 2) })));
}

/** A one-line description of an event's data. */
export function summary(event, d) {
  switch (event) {
    case 'message': {
      const who = d.push_name || (d.from_phone ? `+${d.from_phone}` : phone(d.from));
      const what = d.text || d.caption || `(${d.message_type})`;
      return `${d.is_from_me ? 'me' : who}: ${what}`;
    }
    case 'blast_progress':
    case 'blast_completed':
      return `blast ${String(d.job_id).slice(0, 8)} ${d.status}: ${d.sent_count}/${d.total} sent, ${d.dlq_count} dead-lettered`;
    case 'receipt':
      return `${d.type || 'receipt'} for ${(d.message_ids || []).length || 1} message(s) in ${phone(d.chat)}`;
    case 'disconnected':
      return d.reason || '';
    case 'storage_failed':
      return `the store failed (${d.kind}) at ${clock(d.failed_at)}`;
    case 'storage_recovered':
      return `the store recovered at ${clock(d.recovered_at)} (failed ${d.kind} at ${clock(d.failed_at)})`;
    default: {
      const text = JSON.stringify(d);
      return text === '{}' ? '' : text.length > 140 ? `${text.slice(0, 140)}…` : text;
    }
  }
}
