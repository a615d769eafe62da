// Plugins: upload a WebAssembly component, replace it in place, delete it,
// lift a quarantine; each plugin's counters (calls, drops, rejects, traps,
// timeouts, latency) refresh live. Bindings are below (bindings.js).

import { call, del, get, post, seg } from '../api.js';
import { button, field, form, h, input, replace } from '../dom.js';
import { bytes, count, micros, when } from '../format.js';
import { every } from '../poll.js';
import { attempt, badge, card, empty, notify, pageHeader } from '../ui.js';
import { bindingsSection } from './bindings.js';

/** Renders the plugins page. */
export function render(page) {
  const list = h('div', { class: 'plugin-list' });
  const bindings = bindingsSection();
  let last = '';

  // One hidden file chooser serves every "Replace" button, so a refresh of
  // the list never detaches the chooser the operator has open.
  let replacing = null;
  const replaceInput = h('input', { type: 'file', accept: '.wasm,application/wasm', hidden: true, 'aria-hidden': 'true', tabindex: '-1' });
  replaceInput.addEventListener('change', async () => {
    const file = replaceInput.files[0];
    const target = replacing;
    replaceInput.value = '';
    if (!file || !target) return;
    const done = await attempt(`Replacing ${target.name}`, () => call('PUT', `/plugins/${seg(target.id)}`, file, { contentType: 'application/wasm' }));
    if (done) {
      notify(`${done.name} replaced: now version ${done.version}`);
      await load();
    }
  });

  const load = async () => {
    const res = await attempt('Loading plugins', () => get('/plugins'));
    if (!res) return;
    bindings.plugins(res.plugins);
    const key = JSON.stringify(res.plugins);
    if (key === last) return;
    last = key;
    if (res.plugins.length === 0) {
      replace(list, empty('No plugins loaded. Upload a WebAssembly component above: event filters, message transforms and blast endpoints.'));
      return;
    }
    replace(list, res.plugins.map((p) => pluginCard(p, load, () => {
      replacing = p;
      replaceInput.click();
    })));
  };

  const fileInput = h('input', { type: 'file', name: 'file', accept: '.wasm,application/wasm', required: true });
  const upload = form({ class: 'inline-form', 'aria-label': 'Upload a plugin' }, async (v, f) => {
    const file = fileInput.files[0];
    if (!file) return;
    const name = (v.name || '').trim();
    const query = name ? `?name=${encodeURIComponent(name)}` : '';
    const p = await attempt('Uploading the plugin', () => call('POST', `/plugins${query}`, file, { contentType: 'application/wasm' }));
    if (p) {
      f.reset();
      notify(`Plugin ${p.name} ${p.version} loaded`);
      await load();
    }
  },
  field('Component (.wasm)', fileInput),
  field('Name', input('name', { placeholder: 'the component\u2019s own' })),
  h('button', { type: 'submit', class: 'btn btn-primary', text: 'Upload plugin' }));

  page.append(
    pageHeader('Plugins', 'Sandboxed WebAssembly components, loaded and replaced while the gateway runs.'),
    card('Upload a plugin', upload),
    card('Loaded plugins', list),
    bindings.el,
    replaceInput);
  const stops = [every(1500, load), bindings.stop];
  return () => stops.forEach((s) => s());
}

const COUNTERS = [
  ['calls', 'Calls', count],
  ['drops', 'Drops', count],
  ['rejects', 'Rejects', count],
  ['traps', 'Traps', count],
  ['timeouts', 'Timeouts', count],
  ['mean_us', 'Mean', micros],
  ['p99_us', 'p99', micros],
];

function pluginCard(p, refresh, chooseReplacement) {
  const quarantined = p.status === 'quarantined';
  return h('article', { class: `plugin${quarantined ? ' plugin-quarantined' : ''}`, dataset: { plugin: p.id, name: p.name } },
    h('header', { class: 'plugin-head' },
      h('div', {},
        h('h3', {}, p.name, h('span', { class: 'muted', text: ` ${p.version}` })),
        h('p', { class: 'muted', text: `${p.hooks.join(', ') || 'no hooks'}${p.endpoints?.length ? ` · endpoints: ${p.endpoints.join(', ')}` : ''} · ${bytes(p.size)} · sha256 ${p.sha256.slice(0, 12)}… · updated ${when(p.updated_at)}` })),
      badge(p.status)),
    quarantined ? h('p', { class: 'last-error', text: `Quarantined: ${p.quarantined_reason || 'it kept failing'}. Fix or replace it, then enable it again.` }) : null,
    h('dl', { class: 'counters', 'aria-label': `Counters of ${p.name}` },
      COUNTERS.map(([key, label, fmt]) => h('div', { dataset: { metric: key } },
        h('dt', { text: label }), h('dd', { text: fmt(p.counters?.[key]) })))),
    h('div', { class: 'actions' },
      quarantined ? button('Enable', async () => {
        if (await attempt(`Enabling ${p.name}`, () => post(`/plugins/${seg(p.id)}/enable`))) {
          notify(`${p.name} enabled`);
          await refresh();
        }
      }, { class: 'btn btn-primary' }) : null,
      button('Replace…', chooseReplacement, { 'aria-label': `Replace ${p.name} with a new component` }),
      button('Delete', async () => {
        if (!confirm(`Delete ${p.name}, its bindings and its stored data?`)) return;
        if (await attempt(`Deleting ${p.name}`, () => del(`/plugins/${seg(p.id)}`))) {
          notify(`${p.name} deleted`);
          await refresh();
        }
      }, { class: 'btn btn-danger-ghost', 'aria-label': `Delete ${p.name}` })));
}
