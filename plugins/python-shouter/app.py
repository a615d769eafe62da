"""python-shouter: a Switchboard plugin written in Python (componentize-py),
proof that the WIT contract `switchboard:plugin@0.1.0` is language-neutral.

An event filter that upper-cases the `text` of message events (a `replace`
decision); the other hooks are pass-through. Build with `build.sh`.
"""

from componentize_py_types import Err

from wit_world import exports
from wit_world.exports import meta
from wit_world.imports import host, types

import shout


class Meta(exports.Meta):
    def describe(self) -> meta.Info:
        return meta.Info(name="python-shouter", version="0.1.0", hooks=meta.Hooks.EVENT_FILTER)


class EventFilter(exports.EventFilter):
    def filter(self, event: types.Envelope) -> types.FilterDecision:
        data = shout.shout(event.event, event.data)
        if data is None:
            return types.FilterDecision_Keep()
        host.log(types.LogLevel.DEBUG, f"shouting in session {event.session_id}")
        return types.FilterDecision_Replace(data)


class MessageTransform(exports.MessageTransform):
    def transform(self, send: types.Outbound) -> types.TransformDecision:
        return types.TransformDecision_Unchanged()


class BlastEndpoint(exports.BlastEndpoint):
    def endpoints(self):
        return []

    def expand(self, endpoint: str, recipient: types.Recipient, body: str):
        raise Err(f"python-shouter serves no blast endpoint `{endpoint}`")
