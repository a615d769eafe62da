// The buttons that act on one session: connect, pair (QR or code), pause,
// resume, disconnect, log out, delete. Shared by the list and the detail.
// Running a session needs the `manage` scope: without it there are none.

import { del, post, seg } from '../api.js';
import { can } from '../auth.js';
import { button } from '../dom.js';
import { go } from '../router.js';
import { attempt, notify } from '../ui.js';
import { openPairing } from './pairing.js';

/** Buttons fitting the session's state; `refresh` runs after each action. */
export function sessionActions(s, refresh, { afterDelete } = {}) {
  if (!can('manage')) return [];
  const path = `/sessions/${seg(s.id)}`;
  const act = (label, what, fn) => attempt(`${label} ${s.id}`, async () => {
    await fn();
    notify(`${s.id}: ${what}`);
    await refresh();
  });
  const buttons = [];
  const unpaired = !s.is_logged_in;
  if (unpaired && !s.paused) {
    buttons.push(button('Pair with QR', () => openPairing(s, 'qr', refresh),
      { class: 'btn btn-primary', 'data-action': 'pair-qr', 'aria-label': `Pair ${s.id} with a QR code` }));
    buttons.push(button('Pair with code', () => openPairing(s, 'code', refresh),
      { 'data-action': 'pair-code', 'aria-label': `Pair ${s.id} with a pair code` }));
  }
  if (!unpaired && s.status === 'disconnected' && !s.paused) {
    buttons.push(button('Connect', () => act('Connecting', 'connecting', () => post(`${path}/connect`)),
      { class: 'btn btn-primary', 'data-action': 'connect' }));
  }
  if (!unpaired && s.status !== 'disconnected') {
    buttons.push(button('Disconnect', () => act('Disconnecting', 'disconnected', () => post(`${path}/disconnect`)),
      { 'data-action': 'disconnect' }));
  }
  if (s.paused) {
    buttons.push(button('Resume', () => act('Resuming', 'resumed', () => post(`${path}/resume`)),
      { class: 'btn btn-primary', 'data-action': 'resume' }));
  } else {
    buttons.push(button('Pause', () => act('Pausing', 'paused', () => post(`${path}/pause`)),
      { 'data-action': 'pause' }));
  }
  if (s.is_logged_in) {
    buttons.push(button('Log out', () => {
      if (!confirm(`Log ${s.id} out? The linked device is removed and must be paired again.`)) return undefined;
      return act('Logging out', 'logged out', () => post(`${path}/logout`));
    }, { class: 'btn btn-danger-ghost', 'data-action': 'logout' }));
  }
  buttons.push(button('Delete', async () => {
    if (!confirm(`Delete ${s.id} and everything stored for it (messages, blasts, webhooks)?`)) return;
    const done = await attempt(`Deleting ${s.id}`, () => del(path));
    if (done) {
      notify(`${s.id} deleted`);
      if (afterDelete) afterDelete();
      else go('sessions');
    }
  }, { class: 'btn btn-danger-ghost', 'data-action': 'delete', 'aria-label': `Delete ${s.id}` }));
  return buttons;
}
