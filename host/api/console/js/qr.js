// QR codes drawn in the browser from the pairing string, with the vendored
// qrcode-generator (MIT, see ../vendor/qrcode-generator.LICENSE.txt).

import qrcode from '../vendor/qrcode.mjs';

/** A data: URL of a GIF showing `text` as a QR code (error correction M). */
export function qrDataUrl(text, cellSize = 6) {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  return qr.createDataURL(cellSize, cellSize * 4);
}
