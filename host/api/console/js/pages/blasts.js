// Blasts across every session the token may see: progress bars that move
// while the worker sends, cancel and retry, and a link to each job's
// recipients. Starting, cancelling and retrying need the `send` scope.

import { get, post, seg } from '../api.js';
import { can } from '../auth.js';
import { button, h, refresh } from '../dom.js';
import { count, when } from '../format.js';
import { every } from '../poll.js';
import { href } from '../router.js';
import { attempt, badge, card, empty, notify, pageHeader } from '../ui.js';
import { blastForm } from './blast-form.js';

const TERMINAL = ['completed', 'completed_with_failures', 'cancelled', 'failed'];

/** Renders the blasts page. */
export function render(page) {
  const list = h('div', { class: 'blast-list' });
  const load = async () => {
    const res = await attempt('Loading blasts', () => get('/blasts'));
    if (!res) return;
    refresh(list, res.jobs, () => (res.jobs.length === 0
      ? empty(can('send') ? 'No blasts yet. Start one below.' : 'No blasts yet.')
      : res.jobs.map((job) => jobCard(job, load))));
  };
  page.append(
    pageHeader('Blasts', 'One message to many recipients, sent one at a time by a paced worker.'),
    card('Jobs', list));
  if (can('send')) page.append(blastForm(() => load()));
  return every(1000, load);
}

/** A job's progress bar: sent and dead-lettered shares of the total. */
export function progress(job) {
  const total = Math.max(job.total, 1);
  const done = job.sent_count + job.dlq_count;
  const pct = (n) => `${Math.min(100, (n / total) * 100).toFixed(1)}%`;
  const sent = h('span', { class: 'bar-sent' });
  sent.style.width = pct(job.sent_count);
  const dead = h('span', { class: 'bar-dlq' });
  dead.style.width = pct(job.dlq_count);
  return h('div', {
    class: 'bar', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': job.total, 'aria-valuenow': done,
    'aria-valuetext': `${job.sent_count} of ${job.total} sent, ${job.dlq_count} dead-lettered`,
    'aria-label': `Progress of blast ${job.id.slice(0, 8)}`,
  }, sent, dead);
}

/** Cancel and retry buttons fitting the job's state. */
export function jobActions(job, refresh) {
  if (!can('send')) return [];
  const path = `/sessions/${seg(job.session_id)}/blasts/${seg(job.id)}`;
  const out = [];
  if (!TERMINAL.includes(job.status)) {
    out.push(button('Cancel', async () => {
      if (await attempt('Cancelling the blast', () => post(`${path}/cancel`))) {
        notify('Blast cancelled');
        await refresh();
      }
    }, { class: 'btn btn-danger-ghost', 'data-action': 'cancel' }));
  }
  if (TERMINAL.includes(job.status) && job.status !== 'completed') {
    out.push(button('Retry', async () => {
      if (await attempt('Retrying the blast', () => post(`${path}/retry`))) {
        notify('Blast reopened');
        await refresh();
      }
    }, { 'data-action': 'retry' }));
  }
  return out;
}

function jobCard(job, refresh) {
  return h('article', { class: 'blast', dataset: { job: job.id, status: job.status } },
    h('header', { class: 'blast-head' },
      h('div', {},
        h('h3', {}, h('a', { href: href('blasts', job.session_id, job.id), text: `${job.endpoint} blast from ${job.session_id}` })),
        h('p', { class: 'muted', text: `Created ${when(job.created_at)} · ${job.id.slice(0, 8)}` })),
      badge(job.status)),
    progress(job),
    h('p', { class: 'blast-counts' },
      h('strong', { dataset: { metric: 'sent' }, text: `${count(job.sent_count)} / ${count(job.total)} sent` }),
      ` · ${count(job.dlq_count)} dead-lettered · ${count(job.failed_count)} failed attempts · ${count(job.skipped_dup_count)} duplicates skipped`),
    h('div', { class: 'actions' },
      h('a', { class: 'btn', href: href('blasts', job.session_id, job.id), text: 'Recipients' }),
      jobActions(job, refresh)));
}
