#!/usr/bin/env node
// Example Switchboard webhook receiver: Node 20, built-in modules only.
//
// Usage:
//   node receiver.mjs --port 8080 --secret S [--allow-legacy] [--tolerance 300] [--host 127.0.0.1]
//   node receiver.mjs --port 8080 --scheme standard --secret whsec_... [--tolerance 300]
// Environment fallbacks: WEBHOOK_SECRET for --secret, PORT for --port (prefer
// the environment for the secret: command-line arguments are visible in `ps`).
//
// What it shows:
//   * verifying the v2 signature: HMAC-SHA256 over "<timestamp>.<raw body>",
//     after refusing a timestamp more than `tolerance` seconds from our clock;
//   * optionally verifying legacy signatures (HMAC over the raw body alone,
//     sent by Switchboard before v0.9.8), refused unless --allow-legacy;
//   * verifying the `standard` scheme instead (--scheme standard), for webhooks
//     registered with "signature_scheme": "standard": the Standard Webhooks
//     specification (https://www.standardwebhooks.com), an HMAC-SHA256 over
//     "<webhook-id>.<webhook-timestamp>.<raw body>" keyed by the base64 key of
//     a `whsec_` secret, sent as `webhook-signature: v1,<base64>`. Written out
//     by hand here to stay dependency-free; `npm install standardwebhooks` and
//     `new Webhook(secret).verify(body, req.headers)` does the same check;
//   * constant-time comparison (crypto.timingSafeEqual);
//   * answering quickly and deduplicating on X-Webhook-Delivery-Id (the same
//     value as webhook-id), which is stable across every retry and replay of
//     one event.
//
// Answers: 200 accepted (or duplicate), 400 stale timestamp / malformed
// request, 401 bad or missing signature.
//
// Importing this module (as the tests do) starts nothing; only running it does.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const DEFAULT_TOLERANCE = 300; // seconds
export const MAX_BODY_BYTES = 1 << 20; // refuse bodies over 1 MiB
export const RECENT_IDS = 10_000; // how many delivery ids we remember

// The webhook's signature_scheme: the gateway's own (X-Webhook-Signature, v2)
// or Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature).
export const Scheme = Object.freeze({ SWITCHBOARD: 'switchboard', STANDARD: 'standard' });
export const STANDARD_SECRET_PREFIX = 'whsec_';

// Reasons returned by verify(), and the HTTP status each one gets.
export const Reason = Object.freeze({
  OK: 'ok',
  MISSING_SIGNATURE: 'missing signature',
  MALFORMED_SIGNATURE: 'malformed signature',
  BAD_SIGNATURE: 'signature mismatch',
  LEGACY_REFUSED: 'legacy (unversioned) signature refused; start with --allow-legacy',
  MISSING_TIMESTAMP: 'missing timestamp',
  INVALID_TIMESTAMP: 'invalid timestamp',
  STALE_TIMESTAMP: 'stale timestamp',
  UNSUPPORTED_VERSION: 'unsupported signature version',
  MISSING_ID: 'missing webhook-id',
});

const REASON_STATUS = {
  [Reason.MISSING_SIGNATURE]: 401,
  [Reason.MALFORMED_SIGNATURE]: 401,
  [Reason.BAD_SIGNATURE]: 401,
  [Reason.LEGACY_REFUSED]: 401,
  [Reason.MISSING_TIMESTAMP]: 400,
  [Reason.INVALID_TIMESTAMP]: 400,
  [Reason.STALE_TIMESTAMP]: 400,
  [Reason.UNSUPPORTED_VERSION]: 400,
  [Reason.MISSING_ID]: 400,
};

/**
 * The X-Webhook-Signature value Switchboard would send: v2 ("<timestamp>.<body>")
 * when a timestamp is given, legacy (body alone) when it is not.
 * @param {string|Buffer} secret
 * @param {Buffer|string} body
 * @param {number|string} [timestamp]
 */
export function sign(secret, body, timestamp) {
  const mac = createHmac('sha256', secret);
  if (timestamp !== undefined) mac.update(`${timestamp}.`);
  mac.update(body);
  return `sha256=${mac.digest('hex')}`;
}

/**
 * Check one delivery's signature. Pure: no I/O, no clock of its own.
 * @param {string|Buffer} secret the webhook's secret
 * @param {Record<string, string|string[]|undefined>} headers any casing (req.headers is lower case)
 * @param {Buffer} body the raw request bytes exactly as received
 * @param {number} now our clock, unix seconds
 * @param {number} [tolerance] largest accepted clock difference, seconds
 * @param {boolean} [allowLegacy] accept body-only signatures (no replay protection)
 * @returns {{ok: boolean, reason: string}}
 */
export function verify(secret, headers, body, now, tolerance = DEFAULT_TOLERANCE, allowLegacy = false) {
  const h = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined) h[k.toLowerCase()] = (Array.isArray(v) ? v[v.length - 1] : String(v)).trim();
  }
  const fail = (reason) => ({ ok: false, reason });
  const version = h['x-webhook-signature-version'];

  let prefix; // what goes before the body in the signed message
  if (version === undefined) {
    // Legacy sender: HMAC over the body alone. Nothing binds it to a time,
    // so a captured delivery can be replayed forever: refuse by default.
    if (h['x-webhook-signature'] === undefined) return fail(Reason.MISSING_SIGNATURE);
    if (!allowLegacy) return fail(Reason.LEGACY_REFUSED);
    prefix = '';
  } else if (version === 'v2') {
    // The timestamp check comes BEFORE the signature check: it is what stops
    // an attacker replaying an old (validly signed) delivery.
    const ts = h['x-webhook-timestamp'];
    if (ts === undefined) return fail(Reason.MISSING_TIMESTAMP);
    if (!/^[0-9]{1,15}$/.test(ts)) return fail(Reason.INVALID_TIMESTAMP);
    if (Math.abs(now - Number(ts)) > tolerance) return fail(Reason.STALE_TIMESTAMP);
    prefix = `${ts}.`; // the timestamp text exactly as received
  } else {
    return fail(Reason.UNSUPPORTED_VERSION);
  }

  const given = h['x-webhook-signature'];
  if (given === undefined) return fail(Reason.MISSING_SIGNATURE);
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(given);
  if (!m) return fail(Reason.MALFORMED_SIGNATURE);
  const givenMac = Buffer.from(m[1], 'hex');
  const expectedMac = createHmac('sha256', secret).update(prefix).update(body).digest();
  // Constant time: never compare MACs with ===. Both are 32 bytes here
  // (timingSafeEqual throws on a length difference; the regex rules it out).
  if (!timingSafeEqual(expectedMac, givenMac)) return fail(Reason.BAD_SIGNATURE);
  return { ok: true, reason: Reason.OK };
}

/** Strict base64 (padded, canonical) to bytes; undefined when it is not. */
function strictBase64(text) {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}

/**
 * The HMAC key a Standard Webhooks secret stands for: the base64 after
 * `whsec_` (the prefix is optional, as in the `standardwebhooks` libraries).
 * Throws for anything else.
 * @param {string} secret
 * @returns {Buffer}
 */
export function standardKey(secret) {
  const b64 = secret.startsWith(STANDARD_SECRET_PREFIX) ? secret.slice(STANDARD_SECRET_PREFIX.length) : secret;
  const key = strictBase64(b64);
  if (key === undefined || key.length === 0) {
    throw new Error('a standard secret is `whsec_` followed by a base64 key');
  }
  return key;
}

/**
 * The webhook-signature value Switchboard sends in the `standard` scheme:
 * "v1," + base64(HMAC_SHA256(key, "<id>.<timestamp>.<body>")).
 * @param {string} secret a `whsec_` secret
 * @param {string} msgId the webhook-id
 * @param {number|string} timestamp
 * @param {Buffer|string} body
 */
export function signStandard(secret, msgId, timestamp, body) {
  const mac = createHmac('sha256', standardKey(secret)).update(`${msgId}.${timestamp}.`).update(body);
  return `v1,${mac.digest('base64')}`;
}

/**
 * Check one delivery of a `standard` webhook (Standard Webhooks). Pure.
 * The same check as `new Webhook(secret).verify(body, headers)` of the
 * `standardwebhooks` package: webhook-id, webhook-timestamp and
 * webhook-signature are required; the timestamp must be within `tolerance`
 * seconds of `now` (checked first); webhook-signature is a space-separated
 * list of "<version>,<base64>" and one "v1" entry must match.
 * @param {string} secret the webhook's `whsec_` secret
 * @param {Record<string, string|string[]|undefined>} headers any casing
 * @param {Buffer} body the raw request bytes exactly as received
 * @param {number} now our clock, unix seconds
 * @param {number} [tolerance] largest accepted clock difference, seconds
 * @returns {{ok: boolean, reason: string}}
 */
export function verifyStandard(secret, headers, body, now, tolerance = DEFAULT_TOLERANCE) {
  const h = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined) h[k.toLowerCase()] = (Array.isArray(v) ? v[v.length - 1] : String(v)).trim();
  }
  const fail = (reason) => ({ ok: false, reason });
  const msgId = h['webhook-id'];
  const ts = h['webhook-timestamp'];
  const given = h['webhook-signature'];
  if (!msgId) return fail(Reason.MISSING_ID);
  if (ts === undefined) return fail(Reason.MISSING_TIMESTAMP);
  if (!/^[0-9]{1,15}$/.test(ts)) return fail(Reason.INVALID_TIMESTAMP);
  const timestamp = Number(ts);
  // As in the v2 scheme, the clock check comes before the signature check.
  if (Math.abs(now - timestamp) > tolerance) return fail(Reason.STALE_TIMESTAMP);
  if (!given) return fail(Reason.MISSING_SIGNATURE);

  const candidates = [];
  for (const entry of given.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue; // e.g. v1a (asymmetric) is not ours
    const mac = strictBase64(entry.slice(comma + 1));
    if (mac !== undefined && mac.length === 32) candidates.push(mac);
  }
  if (candidates.length === 0) return fail(Reason.MALFORMED_SIGNATURE);

  const expected = createHmac('sha256', standardKey(secret)).update(`${msgId}.${timestamp}.`).update(body).digest();
  // Several signatures are sent while a secret is rotated: any one may match.
  // Constant time: never compare MACs with === (both are 32 bytes here).
  if (!candidates.some((mac) => timingSafeEqual(expected, mac))) return fail(Reason.BAD_SIGNATURE);
  return { ok: true, reason: Reason.OK };
}

/** A bounded set of the most recent delivery ids (a Set keeps insertion order). */
export class RecentIds {
  constructor(capacity = RECENT_IDS) {
    this.capacity = capacity;
    this.ids = new Set();
  }

  /** Remember an id; false when it was already there (a duplicate). */
  add(id) {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) this.ids.delete(this.ids.values().next().value);
    return true;
  }

  /** Forget an id (processing failed: let the retry through). */
  delete(id) {
    this.ids.delete(id);
  }
}

/** Default event handler: one line per accepted event. */
export function printEvent(envelope, deliveryId) {
  console.log(`${envelope.event} ${envelope.session_id} ${deliveryId}`);
}

/**
 * Create (not start) the receiver's HTTP server. Call .listen(port) on it.
 * @param {object} opts
 * @param {string} opts.secret
 * @param {'switchboard'|'standard'} [opts.scheme] the webhook's signature_scheme
 * @param {number} [opts.tolerance]
 * @param {boolean} [opts.allowLegacy]
 * @param {(envelope: object, deliveryId: string) => void} [opts.onEvent]
 * @param {(line: string) => void} [opts.log] where rejections are logged (stderr by default)
 */
export function createReceiver({
  secret,
  scheme = Scheme.SWITCHBOARD,
  tolerance = DEFAULT_TOLERANCE,
  allowLegacy = false,
  onEvent = printEvent,
  log = (line) => console.error(`receiver: ${line}`),
}) {
  if (!Object.values(Scheme).includes(scheme)) throw new Error(`unknown scheme ${scheme}`);
  if (scheme === Scheme.STANDARD) standardKey(secret); // refuse a secret that is no whsec_ key up front
  // In the standard scheme webhook-id is covered by the signature; it equals X-Webhook-Delivery-Id.
  const idHeader = scheme === Scheme.STANDARD ? 'webhook-id' : 'X-Webhook-Delivery-Id';
  const recent = new RecentIds();

  return createServer((req, res) => {
    const answer = (status, text) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${text}\n`);
    };
    const reject = (status, reason) => {
      log(`rejected (${status}): ${reason}`);
      answer(status, reason);
    };
    if (req.method !== 'POST') return answer(405, 'POST webhooks here');

    // Collect the raw bytes: the signature covers them, not re-encoded JSON.
    const chunks = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) return reject(413, 'body too large');
      const body = Buffer.concat(chunks);

      const nowSecs = Math.floor(Date.now() / 1000);
      const { ok, reason } =
        scheme === Scheme.STANDARD
          ? verifyStandard(secret, req.headers, body, nowSecs, tolerance)
          : verify(secret, req.headers, body, nowSecs, tolerance, allowLegacy);
      if (!ok) return reject(REASON_STATUS[reason], reason);

      const deliveryId = (req.headers[idHeader.toLowerCase()] ?? '').trim();
      if (!deliveryId) return reject(400, `missing ${idHeader}`);
      let envelope;
      try {
        envelope = JSON.parse(body.toString('utf8'));
      } catch {
        envelope = undefined;
      }
      if (envelope === null || typeof envelope !== 'object' || Array.isArray(envelope)) {
        return reject(400, 'body is not a JSON object');
      }

      // Only after the signature checks out: otherwise anyone could fill the
      // set with ids and make us drop real deliveries.
      if (!recent.add(deliveryId)) {
        log(`duplicate delivery ${deliveryId}: already processed`);
        return answer(200, 'duplicate');
      }
      try {
        // Keep this fast (Switchboard waits 5 s at most). Real work should go
        // to a queue; here we just print.
        onEvent(envelope, deliveryId);
      } catch (err) {
        recent.delete(deliveryId); // let Switchboard's retry through
        log(`handler failed for ${deliveryId}: ${err}`);
        return answer(500, 'handler failed');
      }
      answer(200, 'ok');
    });
    req.on('error', () => res.destroy());
  });
}

/** Parse the command line (with env fallbacks) and serve until killed. */
export function main(argv = process.argv.slice(2), env = process.env) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: env.PORT ?? '8080' },
      host: { type: 'string', default: '127.0.0.1' },
      secret: { type: 'string', default: env.WEBHOOK_SECRET },
      tolerance: { type: 'string', default: String(DEFAULT_TOLERANCE) },
      'allow-legacy': { type: 'boolean', default: false },
      scheme: { type: 'string', default: Scheme.SWITCHBOARD },
    },
  });
  const port = Number(values.port);
  const tolerance = Number(values.tolerance);
  if (!values.secret) throw new Error('a secret is required: --secret or WEBHOOK_SECRET');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad --port ${values.port}`);
  if (!Number.isInteger(tolerance) || tolerance < 0) throw new Error(`bad --tolerance ${values.tolerance}`);

  const scheme = values.scheme;
  if (!Object.values(Scheme).includes(scheme)) throw new Error(`bad --scheme ${scheme}: switchboard or standard`);
  if (scheme === Scheme.STANDARD && values['allow-legacy']) throw new Error('--allow-legacy is for the switchboard scheme only');
  const server = createReceiver({ secret: values.secret, scheme, tolerance, allowLegacy: values['allow-legacy'] });
  server.listen(port, values.host, () => {
    const { address, port: bound } = server.address();
    console.error(`listening on http://${address}:${bound}/`);
  });
  return server;
}

// Start only when run as a script, never on import.
const isMain = (() => {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
})();
if (isMain) {
  try {
    main();
  } catch (err) {
    console.error(`receiver: ${err.message}`);
    process.exit(2);
  }
}
