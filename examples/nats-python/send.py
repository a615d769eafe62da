#!/usr/bin/env python3
"""Sends one text message through Switchboard's NATS send queue and prints
its result.

    python3 send.py NATS_URL SESSION TO TEXT [REQUEST_ID]

Exit code 0 when the result is ok, 1 when it is an error, 2 when no result
came in time. Publishing again with the same REQUEST_ID does not send the
message twice: the result then says "already_sent": true.
"""

import asyncio
import json
import os
import sys
import uuid

import nats
from nats.js.errors import NoStreamResponseError

# The gateway's --nats-prefix (same variable).
PREFIX = os.environ.get("SWITCHBOARD_NATS_PREFIX", "switchboard")
# A command failing for a passing reason (session reconnecting) is retried
# for a while before it is answered: give it time.
WAIT_SECS = 90


async def main() -> int:
    if len(sys.argv) not in (5, 6):
        print(__doc__, file=sys.stderr)
        return 2
    url, session, to, text = sys.argv[1:5]
    request_id = sys.argv[5] if len(sys.argv) == 6 else str(uuid.uuid4())
    # A "." in a session id is written "~" in a subject.
    subject = f"{PREFIX}.send.{session.replace('.', '~')}"
    command = {"kind": "text", "request_id": request_id, "to": to, "text": text}

    nc = await nats.connect(url)
    js = nc.jetstream()
    try:
        # The gateway publishes the result to the subject named in the
        # Switchboard-Reply-To header (besides the events stream), which must
        # be the session's own replies subject or one beneath it. Subscribe
        # before publishing so the answer cannot be missed.
        inbox = f"{PREFIX}.replies.{session.replace('.', '~')}.{uuid.uuid4().hex}"
        replies = await nc.subscribe(inbox)
        await nc.flush()
        try:
            ack = await js.publish(
                subject,
                json.dumps(command).encode(),
                headers={"Switchboard-Reply-To": inbox},
            )
        except NoStreamResponseError:
            print(f"no stream takes {subject}: is the gateway running with --nats-url?", file=sys.stderr)
            return 2
        # The acknowledgement only says the command is queued, not sent.
        print(f"queued in {ack.stream} as #{ack.seq}, request_id {request_id}", file=sys.stderr)
        try:
            reply = await replies.next_msg(timeout=WAIT_SECS)
        except asyncio.TimeoutError:
            print(f"no result within {WAIT_SECS} s", file=sys.stderr)
            return 2
        result = json.loads(reply.data)
        print(json.dumps(result, indent=2))
        return 0 if result.get("ok") else 1
    finally:
        await nc.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
