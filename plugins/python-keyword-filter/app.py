"""python-keyword-filter: a Switchboard event filter written in Python
(componentize-py) for world `event-filter-plugin` of
`switchboard:plugin@0.2.0`.

Keeps message events whose text or caption contains a configured keyword and
drops the others (see `keywords.py` for the rules). `tests/build.rs` builds
it: `componentize-py -d wit/0.2.0 -w event-filter-plugin componentize app
-p plugins/python-keyword-filter -o keyword-filter.wasm`.
"""

from wit_world import exports
from wit_world.exports import meta
from wit_world.imports import host, types

import keywords

# The last configuration seen, raw and parsed: the host hands over the
# binding's configuration on every call, and it rarely changes, so it is
# parsed again only when its text does.
_config = ("", keywords.Config())


def _current_config() -> keywords.Config:
    global _config
    raw = host.config()
    if raw != _config[0]:
        _config = (raw, keywords.parse_config(raw))
    return _config[1]


class Meta(exports.Meta):
    def describe(self) -> meta.Info:
        return meta.Info(name="keyword-filter-py", version="0.2.0")


class EventFilter(exports.EventFilter):
    def filter(self, event: types.Event) -> types.FilterDecision:
        message = event.message
        decision = keywords.decide(
            _current_config(),
            is_message=message is not None,
            text=message.text if message is not None else None,
            caption=message.caption if message is not None else None,
            event_data=host.event_data,
        )
        if decision.kind == "drop":
            return types.FilterDecision_Drop()
        if decision.kind == "replace":
            return types.FilterDecision_Replace(decision.data)
        return types.FilterDecision_Keep()
