// Pairing a session: a dialog showing the QR code as an image that is
// redrawn whenever the network rotates the code, or a pair code to type on
// the phone. On the sim network a button plays the phone's part.

import { get, post, seg } from '../api.js';
import { can } from '../auth.js';
import { button, field, form, h, input, replace } from '../dom.js';
import { clock, phone } from '../format.js';
import { every } from '../poll.js';
import { qrDataUrl } from '../qr.js';
import { badge, notify, showError } from '../ui.js';

/**
 * Opens the pairing dialog for `session` in `mode` (`qr` or `code`).
 * `onClose` runs when the dialog closes.
 */
export function openPairing(session, mode, onClose) {
  const id = session.id;
  const statusLine = h('p', { class: 'pair-status' });
  const body = h('div', { class: 'pair-body' });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const closeBtn = h('button', { type: 'button', class: 'btn', text: 'Close' });
  const dialog = h('dialog', { class: 'dialog pairing', 'aria-labelledby': 'pair-title' },
    h('h2', { id: 'pair-title', text: mode === 'qr' ? `Pair ${id} with a QR code` : `Pair ${id} with a code` }),
    statusLine, body, error,
    h('div', { class: 'dialog-actions' },
      // The sim's control API is the admin's.
      session.network === 'sim' && can('admin')
        ? button('Simulate the phone\u2019s scan', async () => {
          try {
            await post(`/sim/sessions/${seg(id)}/scan`);
          } catch (e) {
            say(e.message);
          }
        }, { class: 'btn', 'data-action': 'sim-scan' })
        : null,
      closeBtn));
  const say = (message) => {
    error.textContent = message;
    error.hidden = !message;
  };

  let stop = () => {};
  let shownQr = null;
  let paired = false;

  const qrImage = h('img', { class: 'qr-image', alt: `QR code to link ${id}: scan it with the phone`, width: 264, height: 264 });
  const qrCaption = h('p', { class: 'hint' });

  const refresh = async () => {
    const s = await get(`/sessions/${seg(id)}/status`);
    replace(statusLine, badge(s.status), s.status === 'logged_in' ? ` as ${phone(s.jid)}` : '');
    if (s.status === 'logged_in') {
      if (!paired) {
        paired = true;
        replace(body, h('div', { class: 'pair-done' },
          h('p', { class: 'big-check', 'aria-hidden': 'true', text: '\u2713' }),
          h('p', { text: `Paired: ${id} is linked to ${phone(s.jid)}.` })));
        notify(`${id} is paired`);
        stop();
        closeBtn.textContent = 'Done';
        closeBtn.focus();
      }
      return;
    }
    if (mode === 'qr' && s.status === 'waiting_for_qr') {
      try {
        const { qr, expires_at: expires } = await get(`/sessions/${seg(id)}/qr`);
        if (qr !== shownQr) {
          shownQr = qr;
          qrImage.src = qrDataUrl(qr);
          qrImage.dataset.qr = qr;
          if (!qrImage.isConnected) replace(body, h('figure', { class: 'qr' }, qrImage, qrCaption));
        }
        qrCaption.textContent = `Open the messaging app on the phone \u2192 Linked devices \u2192 Link a device, and scan. The code changes by itself; this one is valid until ${clock(expires)}.`;
      } catch (e) {
        if (e.code !== 'invalid_session_state') throw e;
      }
    } else if (mode === 'qr' && !qrImage.isConnected) {
      replace(body, h('p', { class: 'hint', text: 'Waiting for the network to show a QR code\u2026' }));
    }
  };

  const startPolling = () => {
    stop = every(700, () => refresh().catch((e) => say(e.message)));
  };

  if (mode === 'qr') {
    (async () => {
      try {
        if (session.status === 'disconnected') await post(`/sessions/${seg(id)}/connect`);
      } catch (e) {
        say(e.message);
      }
      startPolling();
    })();
  } else {
    const numberInput = input('phone_number', { inputmode: 'tel', required: true, placeholder: '+1 555 000 1111' });
    replace(body, form({ class: 'stack' }, async ({ phone_number: number }) => {
      try {
        const { pair_code: code } = await post(`/sessions/${seg(id)}/pair`, { phone_number: number });
        replace(body, h('div', { class: 'pair-code' },
          h('p', { class: 'hint', text: 'On the phone: Linked devices \u2192 Link a device \u2192 Link with phone number instead, then type:' }),
          h('p', { class: 'code', 'data-pair-code': code, text: code })));
        startPolling();
      } catch (e) {
        say(e.message);
      }
    },
    field('Phone number of the account', numberInput, 'The number that will own this session, with its country code.'),
    h('button', { type: 'submit', class: 'btn btn-primary', text: 'Get a pair code' })));
    requestAnimationFrame(() => numberInput.focus());
  }

  const close = () => {
    stop();
    if (dialog.open) dialog.close();
  };
  closeBtn.addEventListener('click', close);
  dialog.addEventListener('close', () => {
    stop();
    dialog.remove();
    onClose?.();
  });
  document.body.append(dialog);
  try {
    dialog.showModal();
  } catch (e) {
    showError(e, 'Opening the pairing dialog');
  }
  return close;
}
