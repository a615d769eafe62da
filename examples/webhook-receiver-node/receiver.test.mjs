// Tests for receiver.mjs. Run: node --test examples/webhook-receiver-node/
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';

import {
  createReceiver,
  Reason,
  RecentIds,
  Scheme,
  sign,
  signStandard,
  standardKey,
  verify,
  verifyStandard,
} from './receiver.mjs';

const SECRET = 's3cret';
const NOW = 1_795_313_840;
const BODY = Buffer.from(
  JSON.stringify({ session_id: 's1', event: 'message', timestamp: NOW, data: { text: 'hi' }, offline: false }),
);

/** Headers as Switchboard sends them for a webhook with a secret. */
function v2Headers({ body = BODY, ts = NOW, secret = SECRET, deliveryId = 'd-1' } = {}) {
  return {
    'Content-Type': 'application/json',
    'X-Webhook-Event': 'message',
    'X-Webhook-Delivery-Id': deliveryId,
    'X-Webhook-Timestamp': String(ts),
    'X-Webhook-Signature': sign(secret, body, ts),
    'X-Webhook-Signature-Version': 'v2',
  };
}

// The Standard Webhooks reference libraries' own test vector.
const STD_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const STD_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const STD_NOW = 1614265330;
const STD_BODY = Buffer.from('{"test": 2432232314}');
const STD_SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
const OTHER_STD_SECRET = `whsec_${'A'.repeat(32)}`;

/** Headers as Switchboard sends them for a webhook with "signature_scheme": "standard". */
function standardHeaders({ body = BODY, ts = NOW, secret = STD_SECRET, deliveryId = 'd-1' } = {}) {
  return {
    'Content-Type': 'application/json',
    'X-Webhook-Event': 'message',
    'X-Webhook-Delivery-Id': deliveryId,
    'webhook-id': deliveryId,
    'webhook-timestamp': String(ts),
    'webhook-signature': signStandard(secret, deliveryId, ts, body),
  };
}

/** Headers as Switchboard sent them before v0.9.8. */
function legacyHeaders({ body = BODY, secret = SECRET } = {}) {
  return {
    'Content-Type': 'application/json',
    'X-Webhook-Event': 'message',
    'X-Webhook-Delivery-Id': 'd-legacy',
    'X-Webhook-Signature': sign(secret, body),
  };
}

const fails = (result, reason) => assert.deepEqual(result, { ok: false, reason });

describe('verify', () => {
  test('valid v2', () => {
    assert.deepEqual(verify(SECRET, v2Headers(), BODY, NOW), { ok: true, reason: 'ok' });
  });

  test('known vectors (computed with openssl)', () => {
    const v2 = 'sha256=e7d337c056388d15bb548cec9cc28170e740c2b2182e60f177f393da99134140';
    const legacy = 'sha256=adbde1ce40c89c14215687d5d762a47df6dfaefcfad61e2e86718ffc8498571b';
    assert.equal(sign(SECRET, '{}', NOW), v2);
    assert.equal(sign(SECRET, '{}'), legacy);
    const headers = { 'x-webhook-timestamp': String(NOW), 'x-webhook-signature': v2, 'x-webhook-signature-version': 'v2' };
    assert.ok(verify(SECRET, headers, Buffer.from('{}'), NOW).ok);
    // The vector in Switchboard's own signer tests (host/src/webhooks/signing.rs).
    const host = 'sha256=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686';
    assert.equal(sign('secret', '{"a":1}', 1_700_000_000), host);
  });

  test('header names are case-insensitive', () => {
    const lower = Object.fromEntries(Object.entries(v2Headers()).map(([k, v]) => [k.toLowerCase(), v]));
    assert.ok(verify(SECRET, lower, BODY, NOW).ok);
  });

  test('tampered body', () => {
    fails(verify(SECRET, v2Headers(), Buffer.from(BODY.toString().replace('hi', 'ho')), NOW), Reason.BAD_SIGNATURE);
  });

  test('re-serialised body fails: the signature covers the raw bytes', () => {
    const reencoded = Buffer.from(JSON.stringify(JSON.parse(BODY.toString()), null, 1));
    assert.equal(verify(SECRET, v2Headers(), reencoded, NOW).ok, false);
  });

  test('wrong secret', () => {
    fails(verify(SECRET, v2Headers({ secret: 'not-the-secret' }), BODY, NOW), Reason.BAD_SIGNATURE);
  });

  test('timestamp swapped after signing', () => {
    const headers = { ...v2Headers(), 'X-Webhook-Timestamp': String(NOW + 1) };
    fails(verify(SECRET, headers, BODY, NOW), Reason.BAD_SIGNATURE);
  });

  test('stale timestamp in the past', () => {
    fails(verify(SECRET, v2Headers({ ts: NOW - 301 }), BODY, NOW), Reason.STALE_TIMESTAMP);
  });

  test('stale timestamp in the future', () => {
    fails(verify(SECRET, v2Headers({ ts: NOW + 301 }), BODY, NOW), Reason.STALE_TIMESTAMP);
  });

  test('timestamp at the tolerance edge is accepted; custom tolerance', () => {
    assert.ok(verify(SECRET, v2Headers({ ts: NOW - 300 }), BODY, NOW).ok);
    assert.ok(verify(SECRET, v2Headers({ ts: NOW + 300 }), BODY, NOW).ok);
    fails(verify(SECRET, v2Headers({ ts: NOW - 11 }), BODY, NOW, 10), Reason.STALE_TIMESTAMP);
  });

  test('stale is reported before the signature is checked', () => {
    fails(verify(SECRET, v2Headers({ ts: NOW - 1000, secret: 'wrong' }), BODY, NOW), Reason.STALE_TIMESTAMP);
  });

  test('missing signature', () => {
    const headers = v2Headers();
    delete headers['X-Webhook-Signature'];
    fails(verify(SECRET, headers, BODY, NOW), Reason.MISSING_SIGNATURE);
    delete headers['X-Webhook-Signature-Version'];
    fails(verify(SECRET, headers, BODY, NOW), Reason.MISSING_SIGNATURE);
    fails(verify(SECRET, {}, BODY, NOW), Reason.MISSING_SIGNATURE);
  });

  test('missing timestamp', () => {
    const headers = v2Headers();
    delete headers['X-Webhook-Timestamp'];
    fails(verify(SECRET, headers, BODY, NOW), Reason.MISSING_TIMESTAMP);
  });

  test('invalid timestamp', () => {
    for (const bad of ['', 'abc', '-5', '1.5', '12 34', '1e9', '0x10']) {
      fails(verify(SECRET, { ...v2Headers(), 'X-Webhook-Timestamp': bad }, BODY, NOW), Reason.INVALID_TIMESTAMP);
    }
  });

  test('malformed signature', () => {
    const good = v2Headers()['X-Webhook-Signature'];
    for (const bad of ['', good.slice(7), `sha1=${good.slice(7)}`, good.slice(0, -2), `${good}00`, `sha256=${'zz'.repeat(32)}`]) {
      fails(verify(SECRET, { ...v2Headers(), 'X-Webhook-Signature': bad }, BODY, NOW), Reason.MALFORMED_SIGNATURE);
    }
  });

  test('unknown version', () => {
    fails(verify(SECRET, { ...v2Headers(), 'X-Webhook-Signature-Version': 'v3' }, BODY, NOW), Reason.UNSUPPORTED_VERSION);
  });

  test('legacy refused by default', () => {
    fails(verify(SECRET, legacyHeaders(), BODY, NOW), Reason.LEGACY_REFUSED);
  });

  test('legacy accepted with allowLegacy, still checking the signature', () => {
    assert.deepEqual(verify(SECRET, legacyHeaders(), BODY, NOW, 300, true), { ok: true, reason: 'ok' });
    fails(verify(SECRET, legacyHeaders({ secret: 'wrong' }), BODY, NOW, 300, true), Reason.BAD_SIGNATURE);
  });

  test('a v2 signature is not accepted as legacy (downgrade)', () => {
    const headers = v2Headers();
    delete headers['X-Webhook-Signature-Version'];
    assert.equal(verify(SECRET, headers, BODY, NOW, 300, true).ok, false);
  });
});

describe('verifyStandard (the `standard` scheme, Standard Webhooks)', () => {
  test('the reference vector', () => {
    assert.equal(signStandard(STD_SECRET, STD_ID, STD_NOW, STD_BODY), STD_SIGNATURE);
    const headers = { 'webhook-id': STD_ID, 'webhook-timestamp': String(STD_NOW), 'webhook-signature': STD_SIGNATURE };
    assert.deepEqual(verifyStandard(STD_SECRET, headers, STD_BODY, STD_NOW), { ok: true, reason: 'ok' });
  });

  test('valid, with any header casing, with or without the whsec_ prefix', () => {
    assert.deepEqual(verifyStandard(STD_SECRET, standardHeaders(), BODY, NOW), { ok: true, reason: 'ok' });
    const upper = Object.fromEntries(Object.entries(standardHeaders()).map(([k, v]) => [k.toUpperCase(), v]));
    assert.ok(verifyStandard(STD_SECRET, upper, BODY, NOW).ok);
    assert.ok(verifyStandard(STD_SECRET.slice('whsec_'.length), standardHeaders(), BODY, NOW).ok);
  });

  test('tampered body', () => {
    const tampered = Buffer.from(BODY.toString().replace('hi', 'ho'));
    fails(verifyStandard(STD_SECRET, standardHeaders(), tampered, NOW), Reason.BAD_SIGNATURE);
    fails(verifyStandard(STD_SECRET, standardHeaders(), Buffer.concat([BODY, Buffer.from(' ')]), NOW), Reason.BAD_SIGNATURE);
  });

  test('wrong secret', () => {
    fails(verifyStandard(STD_SECRET, standardHeaders({ secret: OTHER_STD_SECRET }), BODY, NOW), Reason.BAD_SIGNATURE);
  });

  test('the id and the timestamp are signed', () => {
    fails(verifyStandard(STD_SECRET, { ...standardHeaders(), 'webhook-id': 'd-2' }, BODY, NOW), Reason.BAD_SIGNATURE);
    fails(verifyStandard(STD_SECRET, { ...standardHeaders(), 'webhook-timestamp': String(NOW + 1) }, BODY, NOW), Reason.BAD_SIGNATURE);
  });

  test('stale timestamps are refused before the signature is checked', () => {
    for (const ts of [NOW - 301, NOW + 301]) {
      fails(verifyStandard(STD_SECRET, standardHeaders({ ts, secret: OTHER_STD_SECRET }), BODY, NOW), Reason.STALE_TIMESTAMP);
    }
    for (const ts of [NOW - 300, NOW + 300]) assert.ok(verifyStandard(STD_SECRET, standardHeaders({ ts }), BODY, NOW).ok);
  });

  test('missing headers', () => {
    for (const [name, reason] of [
      ['webhook-id', Reason.MISSING_ID],
      ['webhook-timestamp', Reason.MISSING_TIMESTAMP],
      ['webhook-signature', Reason.MISSING_SIGNATURE],
    ]) {
      const headers = standardHeaders();
      delete headers[name];
      fails(verifyStandard(STD_SECRET, headers, BODY, NOW), reason);
    }
  });

  test('invalid timestamp', () => {
    for (const bad of ['', 'abc', '-5', '1.5', '12 34', '1e9']) {
      fails(verifyStandard(STD_SECRET, { ...standardHeaders(), 'webhook-timestamp': bad }, BODY, NOW), Reason.INVALID_TIMESTAMP);
    }
  });

  test('malformed signature', () => {
    const good = standardHeaders()['webhook-signature'];
    for (const bad of [good.slice(3), `v2,${good.slice(3)}`, `v1a,${good.slice(3)}`, 'v1,not base64!', good.slice(0, -4), 'v1,']) {
      fails(verifyStandard(STD_SECRET, { ...standardHeaders(), 'webhook-signature': bad }, BODY, NOW), Reason.MALFORMED_SIGNATURE);
    }
  });

  test('any of several signatures may match (secret rotation)', () => {
    const good = standardHeaders()['webhook-signature'];
    const other = signStandard(OTHER_STD_SECRET, 'd-1', NOW, BODY);
    for (const listed of [`${other} ${good}`, `v1a,xyz ${good}`, `${good} ${other}`]) {
      assert.ok(verifyStandard(STD_SECRET, { ...standardHeaders(), 'webhook-signature': listed }, BODY, NOW).ok, listed);
    }
  });

  test('a switchboard delivery is not a standard one', () => {
    assert.equal(verifyStandard(STD_SECRET, v2Headers({ secret: STD_SECRET }), BODY, NOW).ok, false);
  });

  test('standardKey refuses secrets that are no base64 key', () => {
    assert.equal(standardKey(STD_SECRET).length, 24);
    for (const bad of ['', 'whsec_', 'whsec_not base64!', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS', 's3cret']) {
      assert.throws(() => standardKey(bad), /whsec_/, bad);
    }
  });
});

test('RecentIds is bounded', () => {
  const recent = new RecentIds(3);
  for (const id of ['0', '1', '2', '3']) assert.ok(recent.add(id));
  assert.equal(recent.add('3'), false);
  assert.ok(recent.add('0')); // the oldest was forgotten
});

describe('server (real HTTP on port 0)', () => {
  let server;
  let url;
  let events;
  let logs;

  before(async () => {
    server = createReceiver({
      secret: SECRET,
      onEvent: (env, id) => events.push([env.event, id]),
      log: (line) => logs.push(line), // quiet, and lets us read the reasons
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${server.address().port}/`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    events = [];
    logs = [];
  });

  const post = async (body, headers) => {
    const res = await fetch(url, { method: 'POST', body, headers });
    await res.text();
    return res.status;
  };
  const now = () => Math.floor(Date.now() / 1000);

  test('duplicate delivery id is answered 200 and processed once', async () => {
    const deliveryId = randomUUID();
    for (let i = 0; i < 3; i++) {
      assert.equal(await post(BODY, v2Headers({ ts: now(), deliveryId })), 200);
    }
    assert.deepEqual(events, [['message', deliveryId]]);
    assert.equal(logs.filter((l) => l.includes('duplicate')).length, 2);
  });

  test('distinct deliveries are each processed', async () => {
    for (const deliveryId of ['a', 'b']) assert.equal(await post(BODY, v2Headers({ ts: now(), deliveryId })), 200);
    assert.deepEqual(events.map(([, id]) => id), ['a', 'b']);
  });

  test('status codes', async () => {
    const ts = now();
    assert.equal(await post(Buffer.concat([BODY, Buffer.from(' ')]), v2Headers({ ts })), 401); // tampered
    assert.equal(await post(BODY, v2Headers({ ts, secret: 'x' })), 401); // wrong secret
    assert.equal(await post(BODY, v2Headers({ ts: ts - 3600 })), 400); // stale
    assert.equal(await post(BODY, legacyHeaders()), 401); // legacy refused
    assert.equal(await post(BODY, { 'Content-Type': 'application/json' }), 401); // unsigned
    const noId = v2Headers({ ts });
    delete noId['X-Webhook-Delivery-Id'];
    assert.equal(await post(BODY, noId), 400);
    assert.equal(await post('not json', v2Headers({ body: 'not json', ts })), 400);
    assert.deepEqual(events, []);
    assert.ok(logs.includes('rejected (400): stale timestamp'));
    assert.ok(logs.includes('rejected (401): signature mismatch'));
  });

  test('a rejected delivery does not consume its id', async () => {
    assert.equal(await post(BODY, v2Headers({ ts: now(), secret: 'x', deliveryId: 'z' })), 401);
    assert.equal(await post(BODY, v2Headers({ ts: now(), deliveryId: 'z' })), 200);
    assert.deepEqual(events, [['message', 'z']]);
  });
});

describe('server with scheme standard (real HTTP on port 0)', () => {
  let server;
  let url;
  let events;
  let logs;

  before(async () => {
    server = createReceiver({
      secret: STD_SECRET,
      scheme: Scheme.STANDARD,
      onEvent: (env, id) => events.push([env.event, id]),
      log: (line) => logs.push(line),
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${server.address().port}/`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    events = [];
    logs = [];
  });

  const post = async (body, headers) => {
    const res = await fetch(url, { method: 'POST', body, headers });
    await res.text();
    return res.status;
  };
  const now = () => Math.floor(Date.now() / 1000);

  test('a valid delivery is processed once per webhook-id', async () => {
    const deliveryId = randomUUID();
    for (let i = 0; i < 2; i++) {
      assert.equal(await post(BODY, standardHeaders({ ts: now(), deliveryId })), 200);
    }
    assert.deepEqual(events, [['message', deliveryId]]);
  });

  test('a tampered body is rejected', async () => {
    const tampered = Buffer.from(BODY.toString().replace('hi', 'ho'));
    assert.equal(await post(tampered, standardHeaders({ ts: now() })), 401);
    assert.deepEqual(events, []);
    assert.ok(logs.includes('rejected (401): signature mismatch'));
  });

  test('status codes', async () => {
    const ts = now();
    assert.equal(await post(BODY, standardHeaders({ ts: ts - 3600 })), 400); // stale
    assert.equal(await post(BODY, v2Headers({ ts, secret: STD_SECRET })), 400); // other scheme
    assert.equal(await post(BODY, { 'Content-Type': 'application/json' }), 400); // unsigned
    assert.deepEqual(events, []);
  });

  test('a secret that is no whsec_ key is refused at creation', () => {
    assert.throws(() => createReceiver({ secret: 's3cret', scheme: Scheme.STANDARD }), /whsec_/);
  });
});
