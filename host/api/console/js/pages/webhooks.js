// Webhooks of a session: registering one, and each URL's delivery health
// from GET /sessions/{id}/status (circuit, consecutive failures, next probe,
// last error, events skipped while suspended, the backlog pending in the
// durable outbox and its oldest delivery's age), re-enable and delete; the
// dead-letter queue with replay is below (dlq.js). Registering, removing and
// re-enabling need the `manage` scope; reading them only `read`.

import { del, get, post, seg } from '../api.js';
import { can } from '../auth.js';
import { button, field, form, h, input, refresh } from '../dom.js';
import { count, duration, when } from '../format.js';
import { every } from '../poll.js';
import { attempt, badge, card, empty, notify, pageHeader } from '../ui.js';
import { dlqSection } from './dlq.js';
import { pickSession } from './picker.js';

/** Renders the webhooks page for session `params.id` (or the first). */
export function render(page, { id }) {
  const stops = [];
  let left = false;
  page.append(pageHeader('Webhooks', 'Where each session\u2019s events are delivered, and how that is going.'));
  (async () => {
    const { el, session } = await pickSession('webhooks', id);
    if (left) return;
    page.append(el);
    if (!session) return;
    const path = `/sessions/${seg(session.id)}/webhooks`;
    const list = h('div');

    const load = async () => {
      const [hooks, status] = await Promise.all([
        attempt('Loading webhooks', () => get(path)),
        attempt('Loading delivery health', () => get(`/sessions/${seg(session.id)}/status`)),
      ]);
      if (!hooks || !status) return;
      const health = new Map((status.diagnostics?.webhooks || []).map((d) => [d.url, d]));
      refresh(list, [hooks.webhooks, status.diagnostics], () => (hooks.webhooks.length === 0
        ? empty(can('manage') ? 'No webhook yet: register one above and every event of this session is POSTed to it, signed.' : 'No webhook registered for this session.')
        : hooks.webhooks.map((w) => hookCard(w, health.get(w.url), path, load))));
    };

    const urlInput = input('url', { type: 'url', required: true, placeholder: 'https://example.com/hook' });
    const register = form({ class: 'inline-form', 'aria-label': 'Register a webhook' }, async (v, f) => {
      const body = { url: v.url.trim() };
      const events = (v.events || '').split(',').map((s) => s.trim()).filter(Boolean);
      if (events.length) body.events = events;
      if (v.secret) body.secret = v.secret;
      const created = await attempt('Registering the webhook', () => post(path, body));
      if (created) {
        f.reset();
        notify(`Webhook registered: ${created.url}`);
        await load();
      }
    },
    field('URL', urlInput),
    field('Events', input('events', { placeholder: 'all' }), 'Comma-separated event names; empty for all.'),
    field('Secret', input('secret', { type: 'password', autocomplete: 'new-password' }), 'Signs every delivery (HMAC-SHA256).'),
    h('button', { type: 'submit', class: 'btn btn-primary', text: 'Register webhook' }));

    const dlq = dlqSection(session.id);
    if (can('manage')) page.append(card('Register a webhook', register));
    page.append(card('Webhooks and delivery health', list), dlq.el);
    stops.push(every(2000, load), dlq.stop);
  })();
  return () => {
    left = true;
    stops.forEach((s) => s());
  };
}

/** One webhook with its URL's delivery health. */
function hookCard(w, d, path, refresh) {
  const open = d?.circuit_open;
  const circuit = !d ? badge('closed', 'no deliveries yet')
    : open ? badge(d.retry_in_seconds == null ? 'probing' : 'open', d.retry_in_seconds == null ? 'circuit open: probing' : 'circuit open: suspended')
      : badge('closed', 'circuit closed: delivering');
  return h('article', { class: 'hook', dataset: { webhook: w.id } },
    h('header', { class: 'hook-head' },
      h('div', {}, h('p', { class: 'mono hook-url', text: w.url }),
        h('p', { class: 'muted', text: `Events: ${w.events.join(', ')} · created ${when(w.created_at)}${w.secret ? ` · signed (${w.signature_scheme === 'standard' ? 'Standard Webhooks' : 'X-Webhook-Signature'})` : ''}` })),
      h('div', { class: 'badges' }, circuit, w.enabled ? null : badge('off', 'disabled'))),
    h('dl', { class: 'facts' },
      h('div', {}, h('dt', { text: 'Consecutive failures' }), h('dd', { dataset: { metric: 'failures' }, text: count(d?.consecutive_failures ?? 0) })),
      h('div', {}, h('dt', { text: 'Next probe' }), h('dd', { text: d?.retry_in_seconds == null ? '—' : `in ${duration(d.retry_in_seconds)}` })),
      h('div', {}, h('dt', { text: 'Skipped while suspended' }), h('dd', { text: count(d?.skipped_while_suspended ?? 0) })),
      h('div', {}, h('dt', { text: 'Backlog' }), h('dd', { dataset: { metric: 'backlog' }, text: `${count(d?.pending ?? 0)} pending` })),
      h('div', {}, h('dt', { text: 'Oldest pending' }), h('dd', { dataset: { metric: 'oldest' }, text: d?.oldest_pending_seconds == null ? '—' : `${duration(d.oldest_pending_seconds)} ago` })),
      h('div', { class: 'wide' }, h('dt', { text: 'Last error' }), h('dd', { class: d?.last_error ? 'last-error' : null, text: d?.last_error || 'none' }))),
    can('manage') && h('div', { class: 'actions' },
      button('Re-enable', async () => {
        if (await attempt('Re-enabling the webhook', () => post(`${path}/${seg(w.id)}/enable`))) {
          notify('Webhook re-enabled; any suspension is lifted');
          await refresh();
        }
      }, { 'aria-label': `Re-enable ${w.url}` }),
      button('Delete', async () => {
        if (!confirm(`Stop delivering to ${w.url}?`)) return;
        if (await attempt('Deleting the webhook', () => del(`${path}/${seg(w.id)}`))) {
          notify('Webhook deleted');
          await refresh();
        }
      }, { class: 'btn btn-danger-ghost', 'aria-label': `Delete ${w.url}` })));
}
