// Starting a blast: one text message to many recipients from a paired
// session, paced by the single blast worker.

import { get, post, seg } from '../api.js';
import { field, form, h, input, replace, select } from '../dom.js';
import { attempt, card, notify } from '../ui.js';

/** The "new blast" card; `onCreated(job)` runs after a blast is created. */
export function blastForm(onCreated) {
  const sessionField = h('div', { class: 'field' }, h('p', { class: 'hint', text: 'Loading sessions…' }));
  const recipients = h('textarea', {
    name: 'recipients', rows: 4, required: true, placeholder: '+49 151 1234 5678\n+1 555 000 2222',
  });
  const text = h('textarea', { name: 'text', rows: 3, required: true, placeholder: 'Spring sale: 20% off until Sunday!' });
  const el = form({ class: 'stack', 'aria-label': 'Start a blast' }, async (v, f) => {
    const list = v.recipients.split(/[\n,;]+/).map((s) => s.trim()).filter(Boolean);
    if (list.length === 0) return;
    const body = {
      endpoint: 'text',
      body: { to: list[0], text: v.text },
      recipients: list,
      delay_ms: Number(v.delay_ms || 0),
      jitter_ms: Number(v.jitter_ms || 0),
      max_attempts: Number(v.max_attempts || 3),
    };
    const job = await attempt('Starting the blast', () => post(`/sessions/${seg(v.session)}/blast`, body));
    if (job) {
      f.reset();
      notify(`Blast started: ${job.total} recipient${job.total === 1 ? '' : 's'}${job.skipped_dup ? `, ${job.skipped_dup} duplicate(s) skipped` : ''}`);
      onCreated(job);
    }
  },
  sessionField,
  field('Message', text),
  field('Recipients', recipients, 'Phone numbers or JIDs, one per line (or comma-separated). Duplicates are skipped.'),
  h('div', { class: 'row3' },
    field('Pause between sends (ms)', input('delay_ms', { type: 'number', min: 0, value: 1000, inputmode: 'numeric' })),
    field('Random extra pause (ms)', input('jitter_ms', { type: 'number', min: 0, value: 0, inputmode: 'numeric' })),
    field('Attempts per recipient', input('max_attempts', { type: 'number', min: 1, max: 100, value: 3, inputmode: 'numeric' }))),
  h('button', { type: 'submit', class: 'btn btn-primary', text: 'Start blast' }));

  (async () => {
    const res = await attempt('Loading sessions', () => get('/sessions'));
    const paired = (res?.sessions || []).filter((s) => s.is_logged_in);
    if (paired.length === 0) {
      replace(sessionField, h('p', { class: 'hint', text: 'A blast goes out from a paired session: pair one on the Sessions page first.' }));
      return;
    }
    replace(sessionField, field('From session', select('session', paired.map((s) => [s.id, s.id]), paired[0].id)));
  })();
  return card('New blast', el);
}
