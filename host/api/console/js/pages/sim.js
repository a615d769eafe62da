// The sim network panel, for demos: play the outside world for one session
// — inbound messages from outside users, send failures and latency, a
// dropped connection, an account lock — and see what the network received.

import { del, get, post, seg } from '../api.js';
import { button, field, form, h, input, refresh, table, td } from '../dom.js';
import { phone, when } from '../format.js';
import { every } from '../poll.js';
import { attempt, card, empty, notify, pageHeader } from '../ui.js';
import { pickSession } from './picker.js';

/** Renders the sim panel for session `params.id` (or the first). */
export function render(page, { id }) {
  const stops = [];
  let left = false;
  page.append(pageHeader('Sim network', 'The simulated network inside the gateway: play the outside world for demos and tests.'));
  (async () => {
    try {
      await get('/sim/users');
    } catch (e) {
      if (left) return;
      page.append(card(null, h('p', { class: 'form-error', text: e.code === 'route_not_found'
        ? 'The sim network is off on this gateway (started with --sim false).'
        : `The sim network did not answer: ${e.message}` })));
      return;
    }
    const { el, session } = await pickSession('sim', id);
    if (left) return;
    page.append(el);
    if (!session) return;
    const base = `/sim/sessions/${seg(session.id)}`;
    const outbox = h('div');
    const loadOutbox = async () => {
      const res = await attempt('Loading the outbox', () => get(`${base}/outbox`));
      if (!res) return;
      const recent = res.messages.slice(-20).reverse();
      refresh(outbox, recent, () => (recent.length === 0 ? empty('Nothing sent from this session yet.')
        : table(['Time', 'To', 'Kind', 'Content'], recent, (m) => h('tr', {},
          td('Time', when(m.timestamp)),
          td('To', h('span', { class: 'mono', text: phone(m.to) })),
          td('Kind', m.kind),
          td('Content', m.body?.text || m.body?.caption || JSON.stringify(m.body).slice(0, 100))))));
    };
    page.append(
      h('div', { class: 'grid2' },
        card('Inject inbound messages', inboundForm(base)),
        card('Faults', faultsForm(base))),
      h('div', { class: 'grid2' },
        card('Network events', eventButtons(base, session)),
        card('Outside users', usersForm())),
      card('Outbox: what the network received, newest first', outbox));
    stops.push(every(2000, loadOutbox));
  })();
  return () => {
    left = true;
    stops.forEach((s) => s());
  };
}

/** Messages from an outside user to the session, one or many. */
function inboundForm(base) {
  const result = h('p', { class: 'muted', 'aria-live': 'polite' });
  return h('div', {}, form({ class: 'stack', 'aria-label': 'Inject inbound messages' }, async (v) => {
    const times = Math.min(50, Math.max(1, Number(v.count || 1)));
    result.textContent = '';
    let sent = 0;
    for (let i = 1; i <= times; i += 1) {
      const body = { from: v.from.trim(), text: times > 1 ? `${v.text} (${i}/${times})` : v.text };
      if (v.push_name?.trim()) body.push_name = v.push_name.trim();
      const ok = await attempt('Injecting the message', () => post(`${base}/inbound`, body));
      if (!ok) break;
      sent += 1;
    }
    if (sent) {
      result.textContent = `${sent} message${sent === 1 ? '' : 's'} injected from ${v.from}.`;
      notify(result.textContent);
    }
  },
  h('div', { class: 'row3' },
    field('From (phone)', input('from', { inputmode: 'tel', required: true, value: '4915112345678' })),
    field('Push name', input('push_name', { placeholder: 'Greta' })),
    field('How many', input('count', { type: 'number', min: 1, max: 50, value: 1, inputmode: 'numeric' }))),
  field('Text', input('text', { required: true, value: 'Is my order ready?' })),
  h('button', { type: 'submit', class: 'btn btn-primary', text: 'Inject' })), result);
}

/** Send failures, latency and failing connects; replaced as a whole. */
function faultsForm(base) {
  const failConnect = h('input', { type: 'checkbox', name: 'fail_connect', value: 'true' });
  return form({ class: 'stack', 'aria-label': 'Set faults' }, async (v) => {
    const body = {};
    if (v.fail_send_rate) body.fail_send_rate = Number(v.fail_send_rate);
    if (v.send_latency_ms) body.send_latency_ms = Number(v.send_latency_ms);
    const to = (v.fail_sends_to || '').split(',').map((s) => s.trim()).filter(Boolean);
    if (to.length) body.fail_sends_to = to;
    if (failConnect.checked) body.fail_connect = true;
    if (await attempt('Setting faults', () => post(`${base}/faults`, body))) notify('Faults set');
  },
  h('div', { class: 'row3' },
    field('Failing share of sends', input('fail_send_rate', { type: 'number', min: 0, max: 1, step: 0.05, placeholder: '0.0 – 1.0' })),
    field('Send latency (ms)', input('send_latency_ms', { type: 'number', min: 0, placeholder: '0' }))),
  field('Sends to these fail', input('fail_sends_to', { placeholder: '4915112345678, …' }), 'Comma-separated phones or JIDs.'),
  h('label', { class: 'check' }, failConnect, ' Every connect fails'),
  h('div', { class: 'actions' },
    h('button', { type: 'submit', class: 'btn btn-primary', text: 'Set faults' }),
    button('Clear faults', async () => {
      if (await attempt('Clearing faults', () => del(`${base}/faults`))) notify('Faults cleared');
    })));
}

/** One-click network happenings. */
function eventButtons(base, session) {
  return h('div', { class: 'stack' },
    h('p', { class: 'muted', text: `Acting on ${session.id}. A dropped connection reconnects by itself; a lock pauses reconnects for a cooldown.` }),
    h('div', { class: 'actions' },
      button('Simulate the phone\u2019s scan', async () => {
        if (await attempt('Scanning', () => post(`${base}/scan`))) notify('Scanned: the session pairs');
      }),
      button('Drop the connection', async () => {
        const body = { event: 'disconnected', data: { reason: 'dropped from the sim panel' } };
        if (await attempt('Dropping the connection', () => post(`${base}/events`, body))) notify('Connection dropped');
      }),
      button('Lock the account', async () => {
        if (await attempt('Locking the account', () => post(`${base}/lock`, { reason: 'locked from the sim panel' }))) notify('Account locked');
      }, { class: 'btn btn-danger-ghost' })));
}

/** Registering an outside user (a phone with a push name) on the network. */
function usersForm() {
  return form({ class: 'stack', 'aria-label': 'Register an outside user' }, async (v, f) => {
    const body = { phone: v.phone.trim() };
    if (v.push_name?.trim()) body.push_name = v.push_name.trim();
    const user = await attempt('Registering the user', () => post('/sim/users', body));
    if (user) {
      f.reset();
      notify(`Registered ${v.phone}`);
    }
  },
  h('div', { class: 'row3' },
    field('Phone', input('phone', { inputmode: 'tel', required: true, placeholder: '4915112345678' })),
    field('Push name', input('push_name', { placeholder: 'Greta' }))),
  h('button', { type: 'submit', class: 'btn', text: 'Register user' }));
}
