// Plugin bindings: which plugin runs on which hook, for which sessions,
// with what configuration and failure policy (and, for integrations, the
// capabilities granted). Create, enable or disable, delete.

import { del, get, post, put, seg } from '../api.js';
import { button, field, form, h, input, refresh, replace, select, table, td } from '../dom.js';
import { every } from '../poll.js';
import { attempt, badge, card, empty, notify } from '../ui.js';

const HOOKS = ['event_filter', 'message_transform', 'blast_endpoint', 'integration'];

/** What an integration binding grants, in a few words ("" for other hooks). */
function grantsText(b) {
  if (b.hook !== 'integration') return '';
  const g = b.grants || {};
  const parts = [];
  if (g.http) parts.push(`http: ${g.http.hosts.join(', ')}`);
  for (const k of ['send', 'kv', 'contacts']) if (g[k]) parts.push(k);
  return parts.length ? parts.join('; ') : 'no grants';
}

/** The bindings card. Returns `{el, stop, plugins(list)}`; `plugins` feeds it the current plugins. */
export function bindingsSection() {
  let known = [];
  const list = h('div');
  const pluginSelect = select('plugin_id', [], '', { required: true });
  const hookSelect = select('hook', HOOKS, 'event_filter');
  const config = h('textarea', { name: 'config', rows: 3, class: 'mono', placeholder: '{"keywords": ["order"], "mode": "keep"}' });
  const grants = h('textarea', { name: 'grants', rows: 2, class: 'mono', placeholder: '{"http": {"hosts": ["bots.example.com"]}, "send": true}' });

  const load = async () => {
    const res = await attempt('Loading bindings', () => get('/plugins/bindings'));
    if (!res) return;
    const name = (id) => known.find((p) => p.id === id)?.name || id.slice(0, 8);
    refresh(list, [res.bindings, known.map((p) => p.name)], () => (res.bindings.length === 0
      ? empty('No bindings: an uploaded plugin runs only once it is bound to a hook.')
      : table(['Plugin', 'Hook', 'Sessions', 'Config', 'On failure', 'State', ''], res.bindings, (b) => h('tr', { dataset: { binding: b.id } },
      td('Plugin', name(b.plugin_id)),
      td('Hook', b.hook === 'integration' ? h('span', {}, b.hook, h('br'), h('small', { class: 'grants', text: grantsText(b) })) : b.hook),
      td('Sessions', b.sessions ? b.sessions.join(', ') : 'all'),
      td('Config', h('code', { class: 'config', text: JSON.stringify(b.config) })),
      td('On failure', b.failure_policy.replace('_', ' ')),
      td('State', badge(b.enabled ? 'active' : 'off', b.enabled ? 'enabled' : 'disabled')),
      td('', h('div', { class: 'actions' },
        button(b.enabled ? 'Disable' : 'Enable', async () => {
          // Everything the binding holds goes back, so a toggle changes
          // nothing else (webhook scope, an integration's events and grants).
          const body = {
            plugin_id: b.plugin_id, hook: b.hook, order: b.order, sessions: b.sessions,
            webhooks: b.webhooks ?? null, config: b.config, failure_policy: b.failure_policy,
            enabled: !b.enabled,
          };
          if (b.hook === 'integration') {
            body.events = b.events ?? null;
            body.grants = b.grants ?? null;
          }
          if (await attempt('Changing the binding', () => put(`/plugins/bindings/${seg(b.id)}`, body))) await load();
        }),
        button('Delete', async () => {
          if (await attempt('Deleting the binding', () => del(`/plugins/bindings/${seg(b.id)}`))) {
            notify('Binding deleted');
            await load();
          }
        }, { class: 'btn btn-danger-ghost', 'aria-label': `Delete the ${b.hook} binding of ${name(b.plugin_id)}` })))))));
  };

  const create = form({ class: 'stack', 'aria-label': 'Bind a plugin' }, async (v) => {
    let parsed = {};
    if ((v.config || '').trim()) {
      try {
        parsed = JSON.parse(v.config);
      } catch (e) {
        await attempt('Reading the configuration', () => { throw new Error(`The configuration is not JSON: ${e.message}`); });
        return;
      }
    }
    const sessions = (v.sessions || '').split(',').map((s) => s.trim()).filter(Boolean);
    const body = {
      plugin_id: v.plugin_id, hook: v.hook, config: parsed, failure_policy: v.failure_policy,
      order: Number(v.order || 0), sessions: sessions.length ? sessions : null,
    };
    if (v.hook === 'integration' && (v.grants || '').trim()) {
      try {
        body.grants = JSON.parse(v.grants);
      } catch (e) {
        await attempt('Reading the grants', () => { throw new Error(`The grants are not JSON: ${e.message}`); });
        return;
      }
    }
    if (await attempt('Binding the plugin', () => post('/plugins/bindings', body))) {
      notify('Binding created');
      await load();
    }
  },
  h('div', { class: 'row3' },
    field('Plugin', pluginSelect),
    field('Hook', hookSelect),
    field('On failure', select('failure_policy', [['fail_open', 'let it through (fail open)'], ['fail_closed', 'stop it (fail closed)']], 'fail_open'))),
  h('div', { class: 'row3' },
    field('Sessions', input('sessions', { placeholder: 'all' }), 'Comma-separated ids; empty for every session.'),
    field('Order', input('order', { type: 'number', value: 0, inputmode: 'numeric' }), 'Lower runs first.')),
  field('Configuration (JSON)', config, 'What the plugin reads with config().'),
  field('Grants (JSON, integrations only)', grants, 'What an integration may do: http hosts, send, kv, contacts. Nothing when empty.'),
  h('button', { type: 'submit', class: 'btn btn-primary', text: 'Bind plugin' }));

  return {
    el: card('Bindings', list, h('h3', { text: 'Bind a plugin' }), create),
    stop: every(3000, load),
    plugins(plugins) {
      const ids = plugins.map((p) => `${p.id}:${p.name}`).join();
      if (ids === known.map((p) => `${p.id}:${p.name}`).join()) return;
      known = plugins;
      const chosen = pluginSelect.value;
      replace(pluginSelect, plugins.map((p) => h('option', { value: p.id, text: `${p.name} ${p.version}` })));
      if (plugins.some((p) => p.id === chosen)) pluginSelect.value = chosen;
      load();
    },
  };
}
