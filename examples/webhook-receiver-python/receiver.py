#!/usr/bin/env python3
"""Example Switchboard webhook receiver: Python 3.11, standard library only.

Usage:
    python3 receiver.py --port 8080 --secret S [--allow-legacy] [--tolerance 300]
    python3 receiver.py --port 8080 --scheme standard --secret whsec_... [--tolerance 300]

Environment fallbacks: WEBHOOK_SECRET for --secret, PORT for --port (prefer the
environment for the secret: command-line arguments are visible in `ps`).

What it shows:
  * verifying the v2 signature: HMAC-SHA256 over "<timestamp>.<raw body>",
    after refusing a timestamp more than `tolerance` seconds from our clock;
  * optionally verifying legacy signatures (HMAC over the raw body alone,
    sent by Switchboard before v0.9.8), refused unless --allow-legacy;
  * verifying the `standard` scheme instead (--scheme standard), for webhooks
    registered with "signature_scheme": "standard": the Standard Webhooks
    specification (https://www.standardwebhooks.com), an HMAC-SHA256 over
    "<webhook-id>.<webhook-timestamp>.<raw body>" keyed by the base64 key of a
    `whsec_` secret, sent as `webhook-signature: v1,<base64>`. Written out by
    hand here to stay dependency-free; `pip install standardwebhooks` and
    `Webhook(secret).verify(body, headers)` does the same check;
  * constant-time comparison (hmac.compare_digest);
  * answering quickly and deduplicating on X-Webhook-Delivery-Id (the same
    value as webhook-id), which is stable across every retry and replay of one
    event.

Answers: 200 accepted (or duplicate), 400 stale timestamp / malformed request,
401 bad or missing signature.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import sys
import threading
import time
from collections import OrderedDict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Mapping

DEFAULT_TOLERANCE = 300  # seconds
SWITCHBOARD = "switchboard"  # the gateway's own scheme (X-Webhook-Signature, v2)
STANDARD = "standard"  # Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)
SCHEMES = (SWITCHBOARD, STANDARD)
STANDARD_SECRET_PREFIX = "whsec_"
MAX_BODY_BYTES = 1 << 20  # refuse bodies over 1 MiB
RECENT_IDS = 10_000  # how many delivery ids we remember for deduplication

# Reasons returned by verify(); the HTTP status for each is in REASON_STATUS.
OK = "ok"
MISSING_SIGNATURE = "missing signature"
MALFORMED_SIGNATURE = "malformed signature"
BAD_SIGNATURE = "signature mismatch"
LEGACY_REFUSED = "legacy (unversioned) signature refused; start with --allow-legacy"
MISSING_TIMESTAMP = "missing timestamp"
INVALID_TIMESTAMP = "invalid timestamp"
STALE_TIMESTAMP = "stale timestamp"
UNSUPPORTED_VERSION = "unsupported signature version"
MISSING_ID = "missing webhook-id"

REASON_STATUS = {
    MISSING_SIGNATURE: 401,
    MALFORMED_SIGNATURE: 401,
    BAD_SIGNATURE: 401,
    LEGACY_REFUSED: 401,
    MISSING_TIMESTAMP: 400,
    INVALID_TIMESTAMP: 400,
    STALE_TIMESTAMP: 400,
    UNSUPPORTED_VERSION: 400,
    MISSING_ID: 400,
}


def sign(secret: str | bytes, body: bytes, timestamp: int | None = None) -> str:
    """Return the X-Webhook-Signature value Switchboard would send.

    With a timestamp this is the v2 scheme ("<timestamp>.<body>"); without one,
    the legacy scheme (body alone). Handy for tests and for replaying by hand.
    """
    key = secret.encode() if isinstance(secret, str) else secret
    message = body if timestamp is None else str(timestamp).encode() + b"." + body
    return "sha256=" + hmac.new(key, message, hashlib.sha256).hexdigest()


def verify(
    secret: str | bytes,
    headers: Mapping[str, str],
    body: bytes,
    now: int,
    tolerance: int = DEFAULT_TOLERANCE,
    allow_legacy: bool = False,
) -> tuple[bool, str]:
    """Check one delivery's signature. Pure: no I/O, no clock of its own.

    `headers` may be any mapping (names are matched case-insensitively),
    `body` the raw request bytes exactly as received, `now` our clock in unix
    seconds. Returns (True, "ok") or (False, reason).
    """
    h = {k.lower(): v.strip() for k, v in headers.items()}
    key = secret.encode() if isinstance(secret, str) else secret
    version = h.get("x-webhook-signature-version")

    if version is None:
        # Legacy sender: HMAC over the body alone. Nothing binds it to a time,
        # so a captured delivery can be replayed forever: refuse by default.
        if "x-webhook-signature" not in h:
            return False, MISSING_SIGNATURE
        if not allow_legacy:
            return False, LEGACY_REFUSED
        message = body
    elif version == "v2":
        # The timestamp check comes BEFORE the signature check: it is what
        # stops an attacker replaying an old (validly signed) delivery.
        ts_text = h.get("x-webhook-timestamp")
        if ts_text is None:
            return False, MISSING_TIMESTAMP
        if not re.fullmatch(r"[0-9]{1,18}", ts_text):
            return False, INVALID_TIMESTAMP
        if abs(now - int(ts_text)) > tolerance:
            return False, STALE_TIMESTAMP
        # Sign the timestamp text exactly as received, not a re-formatted int.
        message = ts_text.encode() + b"." + body
    else:
        return False, UNSUPPORTED_VERSION

    given = h.get("x-webhook-signature")
    if given is None:
        return False, MISSING_SIGNATURE
    match = re.fullmatch(r"sha256=([0-9a-fA-F]{64})", given)
    if match is None:
        return False, MALFORMED_SIGNATURE
    given_mac = bytes.fromhex(match.group(1))
    expected_mac = hmac.new(key, message, hashlib.sha256).digest()
    # Constant time: never compare MACs with ==.
    if not hmac.compare_digest(expected_mac, given_mac):
        return False, BAD_SIGNATURE
    return True, OK


def standard_key(secret: str) -> bytes:
    """The HMAC key a Standard Webhooks secret stands for: the base64 after
    `whsec_` (the prefix is optional, as in the `standardwebhooks` libraries).
    Raises ValueError for anything else."""
    b64 = secret[len(STANDARD_SECRET_PREFIX):] if secret.startswith(STANDARD_SECRET_PREFIX) else secret
    try:
        key = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if not key:
        raise ValueError("a standard secret is `whsec_` followed by a base64 key")
    return key


def sign_standard(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """Return the webhook-signature value Switchboard sends in the `standard`
    scheme: "v1," + base64(HMAC_SHA256(key, "<id>.<timestamp>.<body>"))."""
    message = f"{msg_id}.{timestamp}.".encode() + body
    mac = hmac.new(standard_key(secret), message, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def verify_standard(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    now: int,
    tolerance: int = DEFAULT_TOLERANCE,
) -> tuple[bool, str]:
    """Check one delivery of a `standard` webhook (Standard Webhooks). Pure.

    The same check as `standardwebhooks.Webhook(secret).verify(body, headers)`:
    webhook-id, webhook-timestamp and webhook-signature are required; the
    timestamp must be within `tolerance` seconds of `now` (checked first);
    webhook-signature is a space-separated list of "<version>,<base64>" and
    one "v1" entry must match. Returns (True, "ok") or (False, reason).
    """
    h = {k.lower(): v.strip() for k, v in headers.items()}
    msg_id = h.get("webhook-id")
    ts_text = h.get("webhook-timestamp")
    given = h.get("webhook-signature")
    if not msg_id:
        return False, MISSING_ID
    if ts_text is None:
        return False, MISSING_TIMESTAMP
    if not re.fullmatch(r"[0-9]{1,18}", ts_text):
        return False, INVALID_TIMESTAMP
    timestamp = int(ts_text)
    # As in the v2 scheme, the clock check comes before the signature check.
    if abs(now - timestamp) > tolerance:
        return False, STALE_TIMESTAMP
    if not given:
        return False, MISSING_SIGNATURE

    candidates = []
    for entry in given.split(" "):
        version, _, b64 = entry.partition(",")
        if version != "v1":
            continue  # other versions (e.g. v1a, asymmetric) are not ours to check
        try:
            mac = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            continue
        if len(mac) == hashlib.sha256().digest_size:
            candidates.append(mac)
    if not candidates:
        return False, MALFORMED_SIGNATURE

    message = f"{msg_id}.{timestamp}.".encode() + body
    expected = hmac.new(standard_key(secret), message, hashlib.sha256).digest()
    # Several signatures are sent while a secret is rotated: any one may match.
    # Constant time: never compare MACs with ==.
    if not any(hmac.compare_digest(expected, mac) for mac in candidates):
        return False, BAD_SIGNATURE
    return True, OK


class RecentIds:
    """A bounded, thread-safe set of the most recent delivery ids."""

    def __init__(self, capacity: int = RECENT_IDS) -> None:
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._capacity = capacity
        self._lock = threading.Lock()

    def add(self, delivery_id: str) -> bool:
        """Remember an id; False when it was already there (a duplicate)."""
        with self._lock:
            if delivery_id in self._ids:
                return False
            self._ids[delivery_id] = None
            if len(self._ids) > self._capacity:
                self._ids.popitem(last=False)  # forget the oldest
            return True

    def discard(self, delivery_id: str) -> None:
        """Forget an id (processing failed: let the retry through)."""
        with self._lock:
            self._ids.pop(delivery_id, None)


def print_event(envelope: dict, delivery_id: str) -> None:
    """Default event handler: one line per accepted event."""
    print(envelope.get("event"), envelope.get("session_id"), delivery_id, flush=True)


class ReceiverServer(ThreadingHTTPServer):
    """An HTTP server holding the receiver's settings and dedup state."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        secret: str,
        tolerance: int = DEFAULT_TOLERANCE,
        allow_legacy: bool = False,
        on_event: Callable[[dict, str], None] = print_event,
        log: Callable[[str], None] | None = None,
        scheme: str = SWITCHBOARD,
    ) -> None:
        if scheme not in SCHEMES:
            raise ValueError(f"unknown scheme {scheme!r}: one of {', '.join(SCHEMES)}")
        if scheme == STANDARD:
            standard_key(secret)  # refuse a secret that is no whsec_ key before listening
        super().__init__(address, WebhookHandler)
        self.secret = secret
        self.scheme = scheme
        self.tolerance = tolerance
        self.allow_legacy = allow_legacy
        self.on_event = on_event
        # Rejections and notes go to stderr by default; accepted events to stdout.
        self.log = log or (lambda line: print("receiver: " + line, file=sys.stderr, flush=True))
        self.recent = RecentIds()


class WebhookHandler(BaseHTTPRequestHandler):
    """Handles POST on any path; everything else is 405."""

    server: ReceiverServer
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        srv = self.server
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            return self._reject(400, "missing or invalid Content-Length")
        if int(length) > MAX_BODY_BYTES:
            return self._reject(413, "body too large")
        body = self.rfile.read(int(length))  # raw bytes: verify these, not re-encoded JSON

        now = int(time.time())
        if srv.scheme == STANDARD:
            ok, reason = verify_standard(srv.secret, self.headers, body, now, srv.tolerance)
            # webhook-id is covered by the signature; it equals X-Webhook-Delivery-Id.
            id_header = "webhook-id"
        else:
            ok, reason = verify(srv.secret, self.headers, body, now, srv.tolerance, srv.allow_legacy)
            id_header = "X-Webhook-Delivery-Id"
        if not ok:
            return self._reject(REASON_STATUS[reason], reason)

        delivery_id = self.headers.get(id_header, "").strip()
        if not delivery_id:
            return self._reject(400, f"missing {id_header}")
        try:
            envelope = json.loads(body)
            if not isinstance(envelope, dict):
                raise ValueError("not an object")
        except ValueError:
            return self._reject(400, "body is not a JSON object")

        # Only after the signature checks out: otherwise anyone could poison
        # the set with ids and make us drop real deliveries.
        if not srv.recent.add(delivery_id):
            self.log_message("duplicate delivery %s: already processed", delivery_id)
            return self._answer(200, "duplicate")
        try:
            # Keep this fast (Switchboard waits 5 s at most). Real work should
            # go to a queue; here we just print.
            srv.on_event(envelope, delivery_id)
        except Exception as exc:  # let Switchboard retry this delivery
            srv.recent.discard(delivery_id)
            self.log_message("handler failed for %s: %r", delivery_id, exc)
            return self._answer(500, "handler failed")
        self._answer(200, "ok")

    def do_GET(self) -> None:  # noqa: N802
        self._answer(405, "POST webhooks here")

    def _reject(self, status: int, reason: str) -> None:
        self.log_message("rejected (%d): %s", status, reason)
        self._answer(status, reason)

    def _answer(self, status: int, text: str) -> None:
        data = (text + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args) -> None:  # noqa: A002
        self.server.log(format % args)

    def log_request(self, code="-", size="-") -> None:
        pass  # no access log: one line per event is enough


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and serve until interrupted."""
    parser = argparse.ArgumentParser(description="Example Switchboard webhook receiver.")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8080")))
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--secret", default=os.environ.get("WEBHOOK_SECRET"),
                        help="the webhook's secret (or WEBHOOK_SECRET)")
    parser.add_argument("--tolerance", type=int, default=DEFAULT_TOLERANCE,
                        help="largest accepted clock difference, seconds (default 300)")
    parser.add_argument("--allow-legacy", action="store_true",
                        help="also accept legacy body-only signatures (no replay protection)")
    parser.add_argument("--scheme", choices=SCHEMES, default=SWITCHBOARD,
                        help="the webhook's signature_scheme (default switchboard)")
    args = parser.parse_args(argv)
    if not args.secret:
        parser.error("a secret is required: --secret or WEBHOOK_SECRET")
    if args.scheme == STANDARD:
        if args.allow_legacy:
            parser.error("--allow-legacy is for the switchboard scheme only")
        try:
            standard_key(args.secret)
        except ValueError as err:
            parser.error(str(err))

    server = ReceiverServer(
        (args.host, args.port), args.secret, args.tolerance, args.allow_legacy, scheme=args.scheme
    )
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}/", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
