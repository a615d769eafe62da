#!/usr/bin/env python3
"""A webhook receiver that verifies every delivery with the `standardwebhooks`
package from PyPI (the Standard Webhooks reference library), for the
end-to-end test of the `standard` signature scheme
(tests/e2e/webhook_standard.rs). Nothing of Switchboard's is used to verify.

Run it with a Python that has `standardwebhooks` installed (the test makes a
venv for it under target/). It listens on 127.0.0.1 at a free port and prints
`listening on http://127.0.0.1:<port>/` on standard output.

  PUT /secret          body: the webhook's `whsec_` secret, which deliveries
                       are verified with from then on (the gateway generates
                       it at registration, after the receiver must listen);
                       answers 204, or 400 when the library refuses it.
  POST <any path>      a delivery: 204 when `Webhook(secret).verify(body,
                       headers)` accepts it, 400 when it raises (or no secret
                       was set yet). Every delivery is recorded.
  GET /results         every delivery so far, in arrival order, as a JSON
                       array of {"ok", "error", "path", "headers" (lowercased
                       names), "body_b64" (the raw body), "webhook_id",
                       "envelope" (what verify returned, when it accepted)}.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook, WebhookVerificationError


class Receiver(ThreadingHTTPServer):
    """The server, its secret and what it recorded."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.lock = threading.Lock()
        self.webhook: Webhook | None = None
        self.results: list[dict] = []


class Handler(BaseHTTPRequestHandler):
    server: Receiver
    protocol_version = "HTTP/1.1"

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length)

    def _answer(self, status: int, text: str = "") -> None:
        data = text.encode()
        self.send_response(status)
        if status != 204:
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if status != 204:
            self.wfile.write(data)

    def do_PUT(self) -> None:  # noqa: N802 (http.server's naming)
        body = self._body()
        if self.path != "/secret":
            return self._answer(404, "PUT /secret only")
        try:
            webhook = Webhook(body.decode().strip())
        except Exception as exc:  # the library's own refusal of the secret
            return self._answer(400, f"secret refused: {exc!r}")
        with self.server.lock:
            self.server.webhook = webhook
        self._answer(204)

    def do_POST(self) -> None:  # noqa: N802
        body = self._body()
        headers = {name.lower(): value for name, value in self.headers.items()}
        with self.server.lock:
            webhook = self.server.webhook
        record = {
            "ok": False,
            "error": None,
            "path": self.path,
            "headers": headers,
            "body_b64": base64.b64encode(body).decode(),
            "webhook_id": headers.get("webhook-id"),
            "envelope": None,
        }
        if webhook is None:
            record["error"] = "no secret set yet"
        else:
            try:
                # The raw bytes as received, and the request's headers: the
                # library checks the timestamp window and the v1 signature.
                record["envelope"] = webhook.verify(body, headers)
                record["ok"] = True
            except WebhookVerificationError as exc:
                record["error"] = f"WebhookVerificationError: {exc}"
            except Exception as exc:  # a malformed header the library chokes on
                record["error"] = f"{type(exc).__name__}: {exc}"
        with self.server.lock:
            self.server.results.append(record)
        if record["ok"]:
            self._answer(204)
        else:
            self._answer(400, record["error"])

    def do_GET(self) -> None:  # noqa: N802
        if self.path != "/results":
            return self._answer(404, "GET /results only")
        with self.server.lock:
            data = json.dumps(self.server.results).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args) -> None:  # noqa: A002
        print("receiver: " + format % args, file=sys.stderr, flush=True)


def main() -> int:
    server = Receiver()
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
