// The console's entry point: sign-in gate, navigation and page lifecycle.
// Each page module exports `render(container, params)`, which may return a
// function that stops the page's refreshes and streams when it is left.

import { whenUnauthorized } from './api.js';
import { signOut, token } from './auth.js';
import { segments } from './router.js';
import { clearError, showError } from './ui.js';
import * as signin from './pages/signin.js';
import * as sessions from './pages/sessions.js';
import * as session from './pages/session.js';
import * as webhooks from './pages/webhooks.js';
import * as blasts from './pages/blasts.js';
import * as blastDetail from './pages/blast-detail.js';
import * as plugins from './pages/plugins.js';
import * as sim from './pages/sim.js';

/** The page for a route: [nav key, module, params]. */
function pageFor(parts) {
  const [head, a, b, c] = parts;
  switch (head) {
    case 'sessions':
      return a ? ['sessions', session, { id: a, tab: b || 'events' }] : ['sessions', sessions, {}];
    case 'webhooks':
      return ['webhooks', webhooks, { id: a }];
    case 'blasts':
      return a && b ? ['blasts', blastDetail, { session: a, job: b, status: c }] : ['blasts', blasts, {}];
    case 'plugins':
      return ['plugins', plugins, {}];
    case 'sim':
      return ['sim', sim, { id: a }];
    default:
      return null;
  }
}

let leave = null;

/** Renders the page the location names. */
function show({ focus } = {}) {
  if (typeof leave === 'function') leave();
  leave = null;
  clearError();
  document.getElementById('notices').replaceChildren();
  const page = document.getElementById('page');
  page.replaceChildren();
  if (!token()) {
    document.body.classList.add('signed-out');
    leave = signin.render(page, { onSignedIn: () => show({ focus: true }) });
    return;
  }
  document.body.classList.remove('signed-out');
  const found = pageFor(segments());
  if (!found) {
    location.replace('#/sessions');
    return;
  }
  const [nav, module, params] = found;
  for (const link of document.querySelectorAll('[data-nav]')) {
    if (link.dataset.nav === nav) {
      link.setAttribute('aria-current', 'page');
      // On phones the nav scrolls sideways: keep the current page in view.
      link.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    }
    else link.removeAttribute('aria-current');
  }
  try {
    leave = module.render(page, params);
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
