// The console's entry point: sign-in gate, what the token may see,
// navigation and page lifecycle. Each page module exports
// `render(container, params)`, which may return a function that stops the
// page's refreshes and streams when it is left.

import { get, whenUnauthorized } from './api.js';
import { can, covers, keepRights, rights, signOut, token, whoami } from './auth.js';
import { h, replace } from './dom.js';
import { href, segments } from './router.js';
import { card, clearError, pageHeader, showError } from './ui.js';
import * as signin from './pages/signin.js';
import * as sessions from './pages/sessions.js';
import * as session from './pages/session.js';
import * as webhooks from './pages/webhooks.js';
import * as blasts from './pages/blasts.js';
import * as blastDetail from './pages/blast-detail.js';
import * as plugins from './pages/plugins.js';
import * as sim from './pages/sim.js';

/** The scope each navigation entry's pages need (host/api/src/scopes.rs). */
const NEEDS = { sessions: 'read', webhooks: 'read', blasts: 'read', plugins: 'admin', sim: 'admin' };

/** The page for a route: [nav key, module, params, the session it names]. */
function pageFor(parts) {
  const [head, a, b, c] = parts;
  switch (head) {
    case 'sessions':
      return a ? ['sessions', session, { id: a, tab: b || 'events' }, a] : ['sessions', sessions, {}];
    case 'webhooks':
      return ['webhooks', webhooks, { id: a }, a];
    case 'blasts':
      return a && b ? ['blasts', blastDetail, { session: a, job: b, status: c }, a] : ['blasts', blasts, {}];
    case 'plugins':
      return ['plugins', plugins, {}];
    case 'sim':
      // The sim's control API is the operator's, not a session's: the
      // gateway checks its scope only.
      return ['sim', sim, { id: a }];
    default:
      return null;
  }
}

/** Shows the token's name and only the navigation it may use. */
function drawShell() {
  const who = document.getElementById('whoami');
  const r = rights();
  replace(who,
    h('span', { class: 'muted whoami-detail', text: 'Token ' }),
    h('strong', { dataset: { token: whoami() }, text: whoami() }),
    r.admin ? null : h('span', { class: 'muted whoami-detail', text: ` \u00b7 ${r.scopes.join(', ')}` }));
  who.title = `Token ${whoami()}: ${r.scopes.join(', ')} on ${r.sessions === '*' ? 'every session' : r.sessions.join(', ') || 'no session'}`;
  for (const link of document.querySelectorAll('[data-nav]')) {
    link.closest('li').hidden = !can(NEEDS[link.dataset.nav]);
  }
}

/** What a page says when the token may not use it: plainly, with no failing calls. */
function refusal(nav, why) {
  const title = document.querySelector(`[data-nav="${nav}"]`)?.textContent || 'This page';
  const r = rights();
  const sessionsText = r.sessions === '*' ? 'every session' : r.sessions.join(', ') || 'none';
  return [
    pageHeader(title, null),
    card(null,
      h('p', { class: 'refusal', text: `The token \u201c${whoami()}\u201d may not use this page: ${why}.` }),
      h('p', { class: 'muted', text: `Its scopes: ${r.scopes.join(', ')}. Its sessions: ${sessionsText}. Ask the gateway\u2019s admin for a token that may, or sign in with another.` }),
      can('read') ? h('p', {}, h('a', { href: href('sessions'), text: 'Back to the sessions it may see' })) : null),
  ];
}

let leave = null;
/** Counts page visits, so only the latest one renders once rights are read. */
let visit = 0;

/** Renders the page the location names. */
function show({ focus } = {}) {
  if (typeof leave === 'function') leave();
  leave = null;
  visit += 1;
  clearError();
  document.getElementById('notices').replaceChildren();
  const page = document.getElementById('page');
  page.replaceChildren();
  if (!token()) {
    document.body.classList.add('signed-out');
    leave = signin.render(page, { onSignedIn: () => show({ focus: true }) });
    return;
  }
  if (!rights()) {
    // A token kept from before a reload: ask the gateway what it may do
    // before showing anything. A refused token (401) signs out in api.js.
    const mine = visit;
    page.append(h('p', { class: 'empty', text: 'Reading what this token may do\u2026' }));
    get('/tokens/current').then((current) => {
      keepRights(current);
      if (mine === visit) show({ focus });
    }, (err) => {
      if (err.status === 401 || mine !== visit) return;
      showError(err, 'Reading what this token may do');
      page.replaceChildren(h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'btn btn-primary', text: 'Try again', onclick: () => show({ focus: true }) }),
        h('button', { type: 'button', class: 'btn', text: 'Sign out', onclick: () => { signOut(); show({ focus: true }); } })));
    });
    return;
  }
  document.body.classList.remove('signed-out');
  drawShell();
  const found = pageFor(segments());
  if (!found) {
    location.replace('#/sessions');
    return;
  }
  const [nav, module, params, named] = found;
  for (const link of document.querySelectorAll('[data-nav]')) {
    if (link.dataset.nav === nav) {
      link.setAttribute('aria-current', 'page');
      // On phones the nav scrolls sideways: keep the current page in view.
      link.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    }
    else link.removeAttribute('aria-current');
  }
  try {
    if (!can(NEEDS[nav])) page.append(...refusal(nav, `it needs the ${NEEDS[nav]} scope`));
    else if (named && !covers(named)) page.append(...refusal(nav, `session ${named} is not among its sessions`));
    else leave = module.render(page, params);
  } catch (e) {
    showError(e, 'Showing this page');
  }
  if (focus) {
    // Move focus to the new page's title so keyboard and screen-reader
    // users start there.
    requestAnimationFrame(() => page.querySelector('h1')?.focus());
  }
}

whenUnauthorized((err) => {
  show();
  showError(err, 'Signing in');
});

document.getElementById('sign-out').addEventListener('click', () => {
  signOut();
  show({ focus: true });
});

document.getElementById('skip').addEventListener('click', () => {
  document.getElementById('main').focus();
});

window.addEventListener('hashchange', () => show({ focus: true }));
show();
