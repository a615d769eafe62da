// A session's webhook dead-letter queue: deliveries that used all their
// attempts, newest first, each with a replay button (replaying needs the
// `manage` scope).

import { get, post, seg } from '../api.js';
import { can } from '../auth.js';
import { button, h, refresh, table, td } from '../dom.js';
import { when } from '../format.js';
import { every } from '../poll.js';
import { attempt, card, empty, notify } from '../ui.js';

/** The DLQ card of `sessionId`, refreshing itself. Returns `{el, stop}`. */
export function dlqSection(sessionId) {
  const path = `/sessions/${seg(sessionId)}/webhooks/dlq`;
  const body = h('div');
  const replays = can('manage');
  const load = async () => {
    const res = await attempt('Loading the dead-letter queue', () => get(path));
    if (!res) return;
    refresh(body, res.entries, () => (res.entries.length === 0
      ? empty('Nothing dead-lettered: every delivery got through or is still being retried.')
      : [h('p', { class: 'muted', text: `${res.count} entr${res.count === 1 ? 'y' : 'ies'}, newest first` }),
      table(['Failed', 'Event', 'URL', 'Attempts', 'Last error', ...(replays ? [''] : [])], res.entries, (e) => h('tr', {},
        td('Failed', when(e.failed_at)),
        td('Event', h('span', { class: 'event-name', text: e.event })),
        td('URL', h('span', { class: 'mono', text: e.webhook_url })),
        td('Attempts', String(e.attempts)),
        td('Last error', h('span', { class: 'last-error', text: e.last_error })),
        replays && td('', button('Replay', async () => {
          if (await attempt('Replaying the delivery', () => post(`${path}/${seg(e.id)}/replay`))) {
            notify('Replay scheduled');
            await load();
          }
        }, { 'aria-label': `Replay the ${e.event} delivery to ${e.webhook_url}` }))))]));
  };
  return { el: card('Dead-letter queue', body), stop: every(3000, load) };
}
