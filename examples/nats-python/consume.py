#!/usr/bin/env python3
"""Reads Switchboard's events from NATS JetStream with a durable pull consumer.

    python3 consume.py [NATS_URL] [CONSUMER]

NATS_URL defaults to nats://127.0.0.1:4222 and CONSUMER to "example". The
consumer is created on first use and keeps its place in the stream: stop the
script and start it again, and it goes on after the last event it
acknowledged. Prints one line per event: sequence number, session, event.
"""

import asyncio
import json
import os
import sys

import nats

# The gateway's --nats-prefix and --nats-events-stream (same variables).
PREFIX = os.environ.get("SWITCHBOARD_NATS_PREFIX", "switchboard")
STREAM = os.environ.get("SWITCHBOARD_NATS_EVENTS_STREAM", "SWITCHBOARD_EVENTS")


async def main() -> None:
    url = sys.argv[1] if len(sys.argv) > 1 else "nats://127.0.0.1:4222"
    durable = sys.argv[2] if len(sys.argv) > 2 else "example"
    nc = await nats.connect(url)
    js = nc.jetstream()
    # Every event subject (not the send results, which share the stream).
    # A new durable consumer starts at the oldest event the stream holds;
    # an existing one is bound by name and resumes where it was.
    sub = await js.pull_subscribe(f"{PREFIX}.events.>", durable=durable, stream=STREAM)
    print(f"reading {STREAM} as consumer {durable!r}; Ctrl-C stops", file=sys.stderr)
    try:
        while True:
            try:
                msgs = await sub.fetch(batch=100, timeout=5)
            except asyncio.TimeoutError:
                continue  # nothing new within 5 s: ask again
            for msg in msgs:
                headers = msg.headers or {}
                envelope = json.loads(msg.data)  # the webhook envelope
                print(
                    headers.get("Switchboard-Seq"),
                    headers.get("Switchboard-Session", envelope.get("session_id")),
                    headers.get("Switchboard-Event", envelope.get("event")),
                    flush=True,
                )
                # Acknowledge once the event is handled: an event not
                # acknowledged is delivered again (after 30 s by default).
                await msg.ack()
    finally:
        await nc.close()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
