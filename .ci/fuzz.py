#!/usr/bin/env python3
"""Fuzzes the HTTP API from its own OpenAPI document with schemathesis.

Starts a fresh gateway (the `switchboard` binary, the simulated network, a
temporary data directory, a random port), seeds it with one paired session so
that session-scoped operations reach their handlers, and runs schemathesis
against the document the gateway serves. The run fails when any request gets
a 5xx, when a request the document allows is refused as malformed, or when an
answer does not match the schema the document gives for it.

Schemathesis comes from PyPI into a virtual environment this script creates
(target/fuzz-venv); nothing is installed by hand.

    python3 .ci/fuzz.py [--examples N] [--binary PATH]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / "target" / "fuzz-venv"
SCHEMATHESIS = "schemathesis==4.32.5"
# Answers that a request the document allows may still get, because they
# depend on the state of the gateway and not on the request's shape: an id
# that names nothing (404), an operation the resource's state forbids (409),
# a session that is not connected (503), pacing (429).
STATE_STATUSES = ["2xx", "404", "409", "429", "503"]


def ensure_schemathesis() -> Path:
    st = VENV / "bin" / "st"
    stamp = VENV / "installed.txt"
    if st.exists() and stamp.exists() and stamp.read_text() == SCHEMATHESIS:
        return st
    if VENV.exists():
        shutil.rmtree(VENV)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    pip = VENV / "bin" / "pip"
    subprocess.run([str(pip), "install", "--quiet", SCHEMATHESIS], check=True)
    stamp.write_text(SCHEMATHESIS)
    return st


def build_binary() -> Path:
    subprocess.run(
        ["cargo", "build", "--locked", "-p", "switchboard"], cwd=ROOT, check=True
    )
    return ROOT / "target" / "debug" / "switchboard"


def start_gateway(binary: Path, data_dir: str):
    env = dict(os.environ)
    env.update(
        {
            "SWITCHBOARD_DATA_DIR": data_dir,
            "SWITCHBOARD_PLUGIN_DIR": os.path.join(data_dir, "plugins"),
            "SWITCHBOARD_LISTEN": "127.0.0.1:0",
            "SWITCHBOARD_NETWORK": "sim",
            "SWITCHBOARD_SIM_PAIR_DELAY_MS": "10",
            "SWITCHBOARD_LOG_FORMAT": "json",
            "SWITCHBOARD_LOG": "warn,switchboard=info",
            # Fuzzed webhook URLs are accepted without a DNS lookup, and their
            # deliveries give up fast.
            "WEBHOOK_ALLOW_PRIVATE": "true",
            "WEBHOOK_TIMEOUT_SECS": "1",
            "API_TOKEN": "fuzz-token-0123456789abcdef",
        }
    )
    proc = subprocess.Popen(
        [str(binary), "serve"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    found = {}
    ready = threading.Event()
    tail = []

    def read():
        for line in proc.stdout:
            tail.append(line)
            del tail[:-200]
            if "switchboard listening" in line and "addr" not in found:
                try:
                    found["addr"] = json.loads(line)["addr"]
                except (ValueError, KeyError):
                    m = re.search(r"addr=(\S+)", line)
                    if m:
                        found["addr"] = m.group(1)
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(120) or "addr" not in found:
        proc.kill()
        sys.exit("the gateway did not start:\n" + "".join(tail))
    return proc, "http://" + found["addr"], env["API_TOKEN"], tail


def call(base: str, token: str, method: str, path: str, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Authorization", "Bearer " + token)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read() or b"null")


def seed(base: str, token: str) -> None:
    """Two sessions, paired by the sim on their own: generated requests that
    name them reach the handlers' real work instead of a 404."""
    for session, phone in [(SESSION, "15550000001"), (SIDE_SESSION, "15550000002")]:
        call(base, token, "POST", "/api/v1/sessions", {"id": session, "phone": phone})
        call(base, token, "POST", f"/api/v1/sessions/{session}/connect")
    deadline = time.time() + 30
    for session in (SESSION, SIDE_SESSION):
        while not call(base, token, "GET", f"/api/v1/sessions/{session}")["is_logged_in"]:
            if time.time() > deadline:
                sys.exit(f"the seeded session {session} never paired")
            time.sleep(0.1)


# Operations whose acceptance depends on more than the request's shape, each
# with why; positive_data_acceptance is off for them (the other checks stay).
STATEFUL_OPERATIONS = {
    # Any bytes fit `format: binary`; only a WebAssembly component is a plugin.
    "POST /api/v1/plugins": "a plugin must be a WebAssembly component",
    "PUT /api/v1/plugins/{id}": "a plugin must be a WebAssembly component",
    # Each names something that must exist: a plugin, a plugin's blast endpoint.
    "POST /api/v1/plugins/bindings": "`plugin_id` must name an uploaded plugin",
    "POST /api/v1/sessions/{id}/blast": "`endpoint` may name a bound plugin's endpoint",
    # The body's shape depends on the path's `{kind}`; the document gives
    # the union of the kinds' bodies.
    "POST /api/v1/sessions/{id}/messages/{kind}": "the body's shape is the `{kind}`'s",
    # Rules across fields of the sim's test-only control API (a text message
    # has text; a sender's phone goes only with an `@lid` sender).
    "POST /api/v1/sim/sessions/{id}/inbound": "the sim's cross-field message rules",
    # A multipart upload must carry a part named `file`, and a raw one's
    # Content-Type (or `mimetype`) must be a MIME type.
    "POST /api/v1/sessions/{id}/media": "the upload's part and type rules",
    # Any base64 fits `format: byte`; only a picture is a profile picture.
    "PUT /api/v1/sessions/{id}/profile/picture": "a profile picture must be an image",
}

# The session the fuzzer works in (see `seed`), and a second one for the
# operations that would take the first out of `logged_in` for every later
# request (pausing, disconnecting, locking, injected faults, logout, delete).
SESSION = "fuzz"
SIDE_SESSION = "fuzz-side"
TAKES_THE_SESSION_DOWN = [
    "DELETE /api/v1/sessions/{id}",
    "POST /api/v1/sessions/{id}/logout",
    "POST /api/v1/sessions/{id}/disconnect",
    "POST /api/v1/sessions/{id}/pause",
    "POST /api/v1/sim/sessions/{id}/faults",
    "POST /api/v1/sim/sessions/{id}/lock",
    "POST /api/v1/sim/sessions/{id}/replace",
    "POST /api/v1/sim/sessions/{id}/timelock",
    # A proxy change reconnects a connected session through the new route.
    "PUT /api/v1/sessions/{id}/proxy",
    "DELETE /api/v1/sessions/{id}/proxy",
]

# The checks run: no 5xx, no schema-valid request refused, every answer on
# its documented schema. The others schemathesis has are off.
CHECKS = ["not_a_server_error", "positive_data_acceptance", "response_schema_conformance"]
OTHER_CHECKS = [
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "negative_data_rejection",
    "use_after_free",
    "ensure_resource_availability",
    "missing_required_header",
    "ignored_auth",
    "unsupported_method",
    "allow_header_conformance",
    "object_level_authorization",
]


def schemathesis_config() -> str:
    statuses = ", ".join(f'"{s}"' for s in STATE_STATUSES)
    lines = [
        f'hooks = "{Path(__file__).with_name("fuzz_hooks.py")}"',
        "[parameters]",
        f'"path.id" = "{SESSION}"',
        "[checks]",
        *[f"{name}.enabled = true" for name in CHECKS],
        *[f"{name}.enabled = false" for name in OTHER_CHECKS],
        f"positive_data_acceptance.expected-statuses = [{statuses}]",
    ]
    for name in TAKES_THE_SESSION_DOWN:
        lines += [
            "[[operations]]",
            f'include-name = "{name}"',
            "[operations.parameters]",
            f'"path.id" = "{SIDE_SESSION}"',
        ]
    for name in STATEFUL_OPERATIONS:
        lines += [
            "[[operations]]",
            f'include-name = "{name}"',
            "checks.positive_data_acceptance.enabled = false",
        ]
    lines += [
        "[[operations]]",
        'include-name = "GET /console"',
        'checks.positive_data_acceptance.expected-statuses = ["308"]',
        # A stream never ends by itself: it is read for a moment (or a few
        # events), and what came is checked.
        "[[operations]]",
        'include-name = "GET /api/v1/events/stream"',
        "request-timeout = 2",
        "max-stream-events = 5",
        # The contract answers 503 `no_live_client` when the session has no
        # live client (paused, or not logged in): a state, not a fault.
        "[[operations]]",
        'include-name = "POST /api/v1/sessions/{id}/appstate/resync"',
        'checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "503"]',
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20, help="examples per operation")
    parser.add_argument("--binary", type=Path, help="a built switchboard binary")
    parser.add_argument("--seed", type=int, default=1, help="schemathesis' random seed")
    args = parser.parse_args()

    st = ensure_schemathesis()
    binary = args.binary or build_binary()
    data_dir = tempfile.mkdtemp(prefix="switchboard-fuzz-")
    proc, base, token, log_tail = start_gateway(binary, data_dir)
    try:
        seed(base, token)
        config = Path(data_dir) / "schemathesis.toml"
        config.write_text(schemathesis_config())
        cmd = [
            str(st),
            "--no-color",
            "--config-file",
            str(config),
            "run",
            base + "/api/v1/openapi.json",
            "--url",
            base,
            "-H",
            "Authorization: Bearer " + token,
            "--phases",
            "examples,coverage,fuzzing",
            "--max-examples",
            str(args.examples),
            "--seed",
            str(args.seed),
            "--workers",
            "1",
            "--request-timeout",
            "30",
            "--suppress-health-check",
            "all",
            "--generation-database",
            "none",
        ]
        # Its working files (a cache) stay in the temporary directory.
        result = subprocess.run(cmd, cwd=data_dir)
        if proc.poll() is not None:
            print("the gateway exited during the run:\n" + "".join(log_tail))
            return 1
        return result.returncode
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
