// One blast: its progress, counters and recipients, filtered by status.

import { get, seg } from '../api.js';
import { button, h, refresh, table, td } from '../dom.js';
import { count, phone, when } from '../format.js';
import { every } from '../poll.js';
import { href } from '../router.js';
import { attempt, badge, card, empty, pageHeader } from '../ui.js';
import { jobActions, progress } from './blasts.js';

const STATUSES = ['pending', 'sending', 'sent', 'failed', 'dlq', 'skipped_dup'];
const PAGE = 100;

/** Renders blast `params.job` of `params.session`, recipients filtered by `params.status`. */
export function render(page, { session, job: jobId, status }) {
  const path = `/sessions/${seg(session)}/blasts/${seg(jobId)}`;
  const summary = h('div');
  const recipients = h('div');
  let offset = 0;

  const load = async () => {
    const [job, res] = await Promise.all([
      attempt('Loading the blast', () => get(path)),
      attempt('Loading recipients', () => get(`${path}/recipients?limit=${PAGE}&offset=${offset}${status ? `&status=${status}` : ''}`)),
    ]);
    if (job) {
      refresh(summary, job, () => [
        h('div', { class: 'blast-head' }, badge(job.status), h('div', { class: 'actions' }, jobActions(job, load))),
        progress(job),
        h('dl', { class: 'facts' },
          fact('Sent', `${count(job.sent_count)} / ${count(job.total)}`),
          fact('Dead-lettered', count(job.dlq_count)),
          fact('Failed attempts', count(job.failed_count)),
          fact('Duplicates skipped', count(job.skipped_dup_count)),
          fact('Pause', `${job.options.delay_ms} ms + 0..${job.options.jitter_ms} ms`),
          fact('Started', when(job.started_at)),
          fact('Finished', when(job.finished_at)))]);
    }
    if (res) {
      const pager = h('div', { class: 'pager' },
        offset > 0 ? button('Previous page', () => { offset = Math.max(0, offset - PAGE); return load(); }) : null,
        res.count === PAGE ? button('Next page', () => { offset += PAGE; return load(); }) : null);
      refresh(recipients, [res.recipients, offset], () => (res.recipients.length === 0 ? empty('No recipient in this state.')
        : [table(['#', 'Recipient', 'Status', 'Attempts', 'Last error', 'Updated'], res.recipients, (r) => h('tr', {},
          td('#', String(r.id)),
          td('Recipient', h('span', { class: 'mono', text: phone(r.recipient) })),
          td('Status', badge(r.status)),
          td('Attempts', String(r.attempts)),
          td('Last error', r.last_error ? h('span', { class: 'last-error', text: r.last_error }) : '—'),
          td('Updated', when(r.updated_at)))), pager]));
    }
  };

  const filters = h('nav', { class: 'tabs', 'aria-label': 'Recipients by status' },
    h('ul', {}, [['', 'All'], ...STATUSES.map((s) => [s, s.replace('_', ' ')])].map(([s, label]) => h('li', {},
      h('a', {
        href: s ? href('blasts', session, jobId, s) : href('blasts', session, jobId),
        'aria-current': (status || '') === s ? 'page' : false,
        text: label,
      })))));

  page.append(
    h('p', { class: 'crumbs' }, h('a', { href: href('blasts'), text: 'Blasts' }), ` / ${jobId.slice(0, 8)}`),
    pageHeader(`Blast from ${session}`, jobId),
    card(null, summary),
    filters,
    card('Recipients', recipients));
  return every(1500, load);
}

function fact(label, value) {
  return h('div', {}, h('dt', { text: label }), h('dd', { text: value }));
}
