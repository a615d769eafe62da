// Sign-in: the operator pastes the API token (the admin's or one minted for
// some sessions and scopes); the gateway says what it may do, and it is kept
// in this tab's sessionStorage only.

import { call } from '../api.js';
import { signIn } from '../auth.js';
import { field, form, h, input } from '../dom.js';
import { showError } from '../ui.js';

/** Renders the sign-in form; `onSignedIn` runs once the token is accepted. */
export function render(page, { onSignedIn }) {
  const tokenInput = input('token', {
    type: 'password', required: true, autocomplete: 'current-password', spellcheck: 'false',
  });
  page.append(h('div', { class: 'signin' },
    h('div', { class: 'signin-card card' },
      h('div', { class: 'signin-brand' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' })),
      h('h1', { text: 'Sign in to Switchboard', tabindex: '-1' }),
      h('p', { class: 'subtitle', text: 'The console talks to this gateway\u2019s API with your API token. It stays in this browser tab and is forgotten when you close it.' }),
      form({ class: 'stack', 'aria-label': 'Sign in' }, async ({ token }) => {
        const value = token.trim();
        let rights;
        try {
          // Any valid token may ask this, whatever its scopes.
          rights = await call('GET', '/tokens/current', undefined, { auth: value });
        } catch (err) {
          const message = err.status === 401
            ? 'The gateway did not accept this token. Use the value of API_TOKEN, the one in <data-dir>/api-token, or a token the admin minted for you.'
            : err.message;
          showError({ code: err.code, message }, 'Signing in');
          tokenInput.focus();
          return;
        }
        signIn(value, rights);
        onSignedIn();
      },
      field('API token', tokenInput, 'The admin token is printed once when the gateway first starts and kept in <data-dir>/api-token (or set with API_TOKEN); a minted token shows only what it may do.'),
      h('button', { type: 'submit', class: 'btn btn-primary btn-block', text: 'Sign in' })))));
  requestAnimationFrame(() => tokenInput.focus());
}
