"""Tests for receiver.py. Run: python3 -m unittest discover -s examples/webhook-receiver-python"""

import json
import threading
import time
import unittest
import urllib.error
import urllib.request
import uuid

import receiver
from receiver import sign, sign_standard, standard_key, verify, verify_standard

SECRET = "s3cret"
NOW = 1_795_313_840
BODY = json.dumps(
    {"session_id": "s1", "event": "message", "timestamp": NOW, "data": {"text": "hi"}, "offline": False}
).encode()


def v2_headers(body=BODY, ts=NOW, secret=SECRET, delivery_id="d-1"):
    """Headers as Switchboard sends them for a webhook with a secret."""
    return {
        "Content-Type": "application/json",
        "X-Webhook-Event": "message",
        "X-Webhook-Delivery-Id": delivery_id,
        "X-Webhook-Timestamp": str(ts),
        "X-Webhook-Signature": sign(secret, body, ts),
        "X-Webhook-Signature-Version": "v2",
    }


# The Standard Webhooks reference libraries' own test vector.
STD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
STD_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
STD_NOW = 1614265330
STD_BODY = b'{"test": 2432232314}'
STD_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def standard_headers(body=BODY, ts=NOW, secret=STD_SECRET, delivery_id="d-1"):
    """Headers as Switchboard sends them for a webhook with "signature_scheme": "standard"."""
    return {
        "Content-Type": "application/json",
        "X-Webhook-Event": "message",
        "X-Webhook-Delivery-Id": delivery_id,
        "webhook-id": delivery_id,
        "webhook-timestamp": str(ts),
        "webhook-signature": sign_standard(secret, delivery_id, ts, body),
    }


def legacy_headers(body=BODY, secret=SECRET):
    """Headers as Switchboard sent them before v0.9.8."""
    return {
        "Content-Type": "application/json",
        "X-Webhook-Event": "message",
        "X-Webhook-Delivery-Id": "d-legacy",
        "X-Webhook-Signature": sign(secret, body),
    }


class VerifyTests(unittest.TestCase):
    def test_valid_v2(self):
        self.assertEqual(verify(SECRET, v2_headers(), BODY, NOW), (True, "ok"))

    def test_known_vectors(self):
        # Computed independently with openssl, e.g.
        #   printf '1795313840.{}' | openssl dgst -sha256 -hmac s3cret
        v2 = "sha256=e7d337c056388d15bb548cec9cc28170e740c2b2182e60f177f393da99134140"
        legacy = "sha256=adbde1ce40c89c14215687d5d762a47df6dfaefcfad61e2e86718ffc8498571b"
        self.assertEqual(sign(SECRET, b"{}", NOW), v2)
        self.assertEqual(sign(SECRET, b"{}"), legacy)
        headers = {"X-Webhook-Timestamp": str(NOW), "X-Webhook-Signature": v2,
                   "X-Webhook-Signature-Version": "v2"}
        self.assertTrue(verify(SECRET, headers, b"{}", NOW)[0])
        # The vector in Switchboard's own signer tests (host/src/webhooks/signing.rs).
        host = "sha256=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686"
        self.assertEqual(sign("secret", b'{"a":1}', 1_700_000_000), host)

    def test_header_names_are_case_insensitive(self):
        headers = {k.lower(): v for k, v in v2_headers().items()}
        self.assertTrue(verify(SECRET, headers, BODY, NOW)[0])

    def test_uppercase_hex_accepted(self):
        headers = v2_headers()
        headers["X-Webhook-Signature"] = "sha256=" + headers["X-Webhook-Signature"][7:].upper()
        self.assertTrue(verify(SECRET, headers, BODY, NOW)[0])

    def test_tampered_body(self):
        tampered = BODY.replace(b"hi", b"ho")
        self.assertEqual(verify(SECRET, v2_headers(), tampered, NOW), (False, receiver.BAD_SIGNATURE))

    def test_reserialized_body_fails(self):
        # The signature covers the raw bytes: re-encoding the JSON breaks it.
        reencoded = json.dumps(json.loads(BODY), separators=(",", ":")).encode()
        self.assertNotEqual(reencoded, BODY)
        self.assertFalse(verify(SECRET, v2_headers(), reencoded, NOW)[0])

    def test_wrong_secret(self):
        headers = v2_headers(secret="not-the-secret")
        self.assertEqual(verify(SECRET, headers, BODY, NOW), (False, receiver.BAD_SIGNATURE))

    def test_timestamp_swapped_after_signing(self):
        headers = v2_headers()
        headers["X-Webhook-Timestamp"] = str(NOW + 1)
        self.assertEqual(verify(SECRET, headers, BODY, NOW), (False, receiver.BAD_SIGNATURE))

    def test_stale_timestamp_in_the_past(self):
        ts = NOW - 301
        self.assertEqual(verify(SECRET, v2_headers(ts=ts), BODY, NOW), (False, receiver.STALE_TIMESTAMP))

    def test_stale_timestamp_in_the_future(self):
        ts = NOW + 301
        self.assertEqual(verify(SECRET, v2_headers(ts=ts), BODY, NOW), (False, receiver.STALE_TIMESTAMP))

    def test_timestamp_at_the_tolerance_edge_is_accepted(self):
        for ts in (NOW - 300, NOW + 300):
            self.assertTrue(verify(SECRET, v2_headers(ts=ts), BODY, NOW)[0])

    def test_custom_tolerance(self):
        self.assertFalse(verify(SECRET, v2_headers(ts=NOW - 11), BODY, NOW, tolerance=10)[0])

    def test_stale_is_reported_before_the_signature_is_checked(self):
        headers = v2_headers(ts=NOW - 1000, secret="wrong")
        self.assertEqual(verify(SECRET, headers, BODY, NOW), (False, receiver.STALE_TIMESTAMP))

    def test_missing_signature(self):
        headers = v2_headers()
        del headers["X-Webhook-Signature"]
        self.assertEqual(verify(SECRET, headers, BODY, NOW), (False, receiver.MISSING_SIGNATURE))
        del headers["X-Webhook-Signature-Version"]
        self.assertEqual(verify(SECRET, headers, BODY, NOW), (False, receiver.MISSING_SIGNATURE))

    def test_missing_timestamp(self):
        headers = v2_headers()
        del headers["X-Webhook-Timestamp"]
        self.assertEqual(verify(SECRET, headers, BODY, NOW), (False, receiver.MISSING_TIMESTAMP))

    def test_invalid_timestamp(self):
        for bad in ("", "abc", "-5", "1.5", "12 34", "１２"):
            headers = v2_headers()
            headers["X-Webhook-Timestamp"] = bad
            self.assertEqual(verify(SECRET, headers, BODY, NOW), (False, receiver.INVALID_TIMESTAMP), bad)

    def test_malformed_signature(self):
        good = v2_headers()["X-Webhook-Signature"]
        for bad in ("", good[7:], "sha1=" + good[7:], good[:-2], good + "00", "sha256=" + "zz" * 32):
            headers = v2_headers()
            headers["X-Webhook-Signature"] = bad
            self.assertEqual(verify(SECRET, headers, BODY, NOW), (False, receiver.MALFORMED_SIGNATURE), bad)

    def test_unknown_version(self):
        headers = v2_headers()
        headers["X-Webhook-Signature-Version"] = "v3"
        self.assertEqual(verify(SECRET, headers, BODY, NOW), (False, receiver.UNSUPPORTED_VERSION))

    def test_legacy_refused_by_default(self):
        self.assertEqual(verify(SECRET, legacy_headers(), BODY, NOW), (False, receiver.LEGACY_REFUSED))

    def test_legacy_accepted_with_allow_legacy(self):
        self.assertEqual(verify(SECRET, legacy_headers(), BODY, NOW, allow_legacy=True), (True, "ok"))

    def test_legacy_still_checks_the_signature(self):
        headers = legacy_headers(secret="wrong")
        self.assertEqual(verify(SECRET, headers, BODY, NOW, allow_legacy=True), (False, receiver.BAD_SIGNATURE))
        self.assertFalse(verify(SECRET, legacy_headers(), BODY + b" ", NOW, allow_legacy=True)[0])

    def test_v2_signature_is_not_accepted_as_legacy(self):
        headers = v2_headers()
        del headers["X-Webhook-Signature-Version"]  # downgrade attempt
        self.assertFalse(verify(SECRET, headers, BODY, NOW, allow_legacy=True)[0])


class StandardVerifyTests(unittest.TestCase):
    """The `standard` scheme (Standard Webhooks)."""

    def test_reference_vector(self):
        self.assertEqual(sign_standard(STD_SECRET, STD_ID, STD_NOW, STD_BODY), STD_SIGNATURE)
        headers = {"webhook-id": STD_ID, "webhook-timestamp": str(STD_NOW), "webhook-signature": STD_SIGNATURE}
        self.assertEqual(verify_standard(STD_SECRET, headers, STD_BODY, STD_NOW), (True, "ok"))

    def test_valid(self):
        self.assertEqual(verify_standard(STD_SECRET, standard_headers(), BODY, NOW), (True, "ok"))

    def test_header_names_are_case_insensitive(self):
        headers = {k.title(): v for k, v in standard_headers().items()}
        self.assertTrue(verify_standard(STD_SECRET, headers, BODY, NOW)[0])

    def test_the_prefix_is_optional(self):
        bare = STD_SECRET[len("whsec_"):]
        self.assertTrue(verify_standard(bare, standard_headers(), BODY, NOW)[0])

    def test_tampered_body(self):
        tampered = BODY.replace(b"hi", b"ho")
        self.assertEqual(verify_standard(STD_SECRET, standard_headers(), tampered, NOW), (False, receiver.BAD_SIGNATURE))
        self.assertFalse(verify_standard(STD_SECRET, standard_headers(), BODY + b" ", NOW)[0])

    def test_wrong_secret(self):
        other = "whsec_" + "A" * 32
        headers = standard_headers(secret=other)
        self.assertEqual(verify_standard(STD_SECRET, headers, BODY, NOW), (False, receiver.BAD_SIGNATURE))

    def test_the_id_and_timestamp_are_signed(self):
        headers = standard_headers()
        headers["webhook-id"] = "d-2"
        self.assertEqual(verify_standard(STD_SECRET, headers, BODY, NOW), (False, receiver.BAD_SIGNATURE))
        headers = standard_headers()
        headers["webhook-timestamp"] = str(NOW + 1)
        self.assertEqual(verify_standard(STD_SECRET, headers, BODY, NOW), (False, receiver.BAD_SIGNATURE))

    def test_stale_timestamp_checked_first(self):
        for ts in (NOW - 301, NOW + 301):
            headers = standard_headers(ts=ts, secret="whsec_" + "A" * 32)
            self.assertEqual(verify_standard(STD_SECRET, headers, BODY, NOW), (False, receiver.STALE_TIMESTAMP))
        for ts in (NOW - 300, NOW + 300):
            self.assertTrue(verify_standard(STD_SECRET, standard_headers(ts=ts), BODY, NOW)[0])

    def test_missing_headers(self):
        for name, reason in (
            ("webhook-id", receiver.MISSING_ID),
            ("webhook-timestamp", receiver.MISSING_TIMESTAMP),
            ("webhook-signature", receiver.MISSING_SIGNATURE),
        ):
            headers = standard_headers()
            del headers[name]
            self.assertEqual(verify_standard(STD_SECRET, headers, BODY, NOW), (False, reason), name)

    def test_invalid_timestamp(self):
        for bad in ("", "abc", "-5", "1.5", "12 34"):
            headers = standard_headers()
            headers["webhook-timestamp"] = bad
            self.assertEqual(verify_standard(STD_SECRET, headers, BODY, NOW), (False, receiver.INVALID_TIMESTAMP), bad)

    def test_malformed_signature(self):
        good = standard_headers()["webhook-signature"]
        for bad in (good[3:], "v2," + good[3:], "v1a," + good[3:], "v1,not base64!", good[:-4], "v1,"):
            headers = standard_headers()
            headers["webhook-signature"] = bad
            self.assertEqual(verify_standard(STD_SECRET, headers, BODY, NOW), (False, receiver.MALFORMED_SIGNATURE), bad)

    def test_any_of_several_signatures_may_match(self):
        # While a secret is rotated, a sender signs with the old and the new key.
        good = standard_headers()["webhook-signature"]
        other = sign_standard("whsec_" + "A" * 32, "d-1", NOW, BODY)
        for listed in (f"{other} {good}", f"v1a,xyz {good}", f"{good} {other}"):
            headers = standard_headers()
            headers["webhook-signature"] = listed
            self.assertTrue(verify_standard(STD_SECRET, headers, BODY, NOW)[0], listed)

    def test_a_switchboard_delivery_is_not_a_standard_one(self):
        self.assertFalse(verify_standard(STD_SECRET, v2_headers(secret=STD_SECRET), BODY, NOW)[0])

    def test_standard_key_refuses_bad_secrets(self):
        self.assertEqual(len(standard_key(STD_SECRET)), 24)
        for bad in ("", "whsec_", "whsec_not base64!", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS"):
            with self.assertRaises(ValueError, msg=bad):
                standard_key(bad)


class RecentIdsTests(unittest.TestCase):
    def test_bounded(self):
        recent = receiver.RecentIds(capacity=3)
        for i in range(4):
            self.assertTrue(recent.add(str(i)))
        self.assertFalse(recent.add("3"))
        self.assertTrue(recent.add("0"))  # the oldest was forgotten


class ServerTests(unittest.TestCase):
    """Start the real server on port 0 in a thread and POST with urllib."""

    def setUp(self):
        self.events = []
        self.logs = []
        self.server = receiver.ReceiverServer(
            ("127.0.0.1", 0),
            SECRET,
            on_event=lambda env, did: self.events.append((env["event"], did)),
            log=self.logs.append,  # keeps test output quiet, and lets us read the reasons
        )
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def post(self, body, headers):
        req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:
                return resp.status
        except urllib.error.HTTPError as err:
            return err.code

    def test_duplicate_delivery_is_answered_200_and_processed_once(self):
        delivery_id = str(uuid.uuid4())
        now = int(time.time())
        for _ in range(3):  # the first delivery and two retries
            headers = v2_headers(ts=now, delivery_id=delivery_id)
            self.assertEqual(self.post(BODY, headers), 200)
        self.assertEqual(self.events, [("message", delivery_id)])
        self.assertEqual(sum("duplicate" in line for line in self.logs), 2)

    def test_distinct_deliveries_are_each_processed(self):
        now = int(time.time())
        for did in ("a", "b"):
            self.assertEqual(self.post(BODY, v2_headers(ts=now, delivery_id=did)), 200)
        self.assertEqual([d for _, d in self.events], ["a", "b"])

    def test_status_codes(self):
        now = int(time.time())
        self.assertEqual(self.post(BODY + b" ", v2_headers(ts=now)), 401)  # tampered
        self.assertEqual(self.post(BODY, v2_headers(ts=now, secret="x")), 401)  # wrong secret
        self.assertEqual(self.post(BODY, v2_headers(ts=now - 3600)), 400)  # stale
        self.assertEqual(self.post(BODY, legacy_headers()), 401)  # legacy refused
        self.assertEqual(self.post(BODY, {"Content-Type": "application/json"}), 401)  # unsigned
        headers = v2_headers(ts=now)
        del headers["X-Webhook-Delivery-Id"]
        self.assertEqual(self.post(BODY, headers), 400)  # no delivery id
        self.assertEqual(self.post(b"not json", v2_headers(body=b"not json", ts=now)), 400)
        self.assertEqual(self.events, [])
        self.assertIn("rejected (400): stale timestamp", self.logs)
        self.assertIn("rejected (401): signature mismatch", self.logs)

    def test_rejected_delivery_does_not_consume_its_id(self):
        now = int(time.time())
        self.assertEqual(self.post(BODY, v2_headers(ts=now, secret="x", delivery_id="z")), 401)
        self.assertEqual(self.post(BODY, v2_headers(ts=now, delivery_id="z")), 200)
        self.assertEqual(self.events, [("message", "z")])


class StandardServerTests(unittest.TestCase):
    """The real server with scheme="standard"."""

    def setUp(self):
        self.events = []
        self.logs = []
        self.server = receiver.ReceiverServer(
            ("127.0.0.1", 0),
            STD_SECRET,
            on_event=lambda env, did: self.events.append((env["event"], did)),
            log=self.logs.append,
            scheme=receiver.STANDARD,
        )
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    post = ServerTests.post

    def test_a_valid_delivery_is_processed_once_by_webhook_id(self):
        now = int(time.time())
        delivery_id = str(uuid.uuid4())
        for _ in range(2):
            self.assertEqual(self.post(BODY, standard_headers(ts=now, delivery_id=delivery_id)), 200)
        self.assertEqual(self.events, [("message", delivery_id)])

    def test_a_tampered_body_is_rejected(self):
        now = int(time.time())
        headers = standard_headers(ts=now)
        self.assertEqual(self.post(BODY.replace(b"hi", b"ho"), headers), 401)
        self.assertEqual(self.events, [])
        self.assertIn("rejected (401): signature mismatch", self.logs)

    def test_status_codes(self):
        now = int(time.time())
        self.assertEqual(self.post(BODY, standard_headers(ts=now - 3600)), 400)  # stale
        self.assertEqual(self.post(BODY, v2_headers(ts=now, secret=STD_SECRET)), 400)  # other scheme
        self.assertEqual(self.post(BODY, {"Content-Type": "application/json"}), 400)  # unsigned
        self.assertEqual(self.events, [])

    def test_a_secret_that_is_no_whsec_key_is_refused_at_start(self):
        with self.assertRaises(ValueError):
            receiver.ReceiverServer(("127.0.0.1", 0), "s3cret", scheme=receiver.STANDARD)


if __name__ == "__main__":
    unittest.main()
