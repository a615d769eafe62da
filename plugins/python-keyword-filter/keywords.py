"""The pure logic of the keyword filter: no bindings, so it runs (and is
tested) on any Python. `app.py` wires it to the WIT world; the JavaScript
twin (`plugins/js-keyword-filter/keywords.js`) decides the same way.

Configuration: `{"keywords": ["order", "refund"], "tag": false}`. A message
event is kept when its text or caption contains a keyword (case-insensitive)
and dropped otherwise; other events are kept, and so is everything when no
keyword is configured. With `"tag": true` a kept message is replaced by its
whole data plus `"matched_keyword"`.
"""

import json
from dataclasses import dataclass
from typing import Callable, NamedTuple, Optional, Tuple


@dataclass(frozen=True)
class Config:
    """A parsed configuration."""

    keywords: Tuple[str, ...] = ()
    """The keywords as configured (order kept: the first that matches is reported)."""
    tag: bool = False
    """Whether a kept message is replaced by its data plus `matched_keyword`."""


class Decision(NamedTuple):
    """What to do with an event: `kind` is `keep`, `drop` or `replace`;
    `data` is the replacement data (JSON text) for `replace`, else None."""

    kind: str
    data: Optional[str] = None


KEEP = Decision("keep")
DROP = Decision("drop")


def parse_config(config_json: str) -> Config:
    """The configuration in `config_json`.

    A configuration that is not a JSON object, keywords that are not a list,
    and entries that are not non-empty strings are ignored rather than
    refused: a filter has no way to report a bad configuration except by
    failing every event, and keeping events is the safer failure. An empty
    keyword is left out because it would "match" every text.
    """
    try:
        raw = json.loads(config_json)
    except ValueError:
        return Config()
    if not isinstance(raw, dict):
        return Config()
    keywords = raw.get("keywords")
    if not isinstance(keywords, list):
        keywords = []
    return Config(
        keywords=tuple(k for k in keywords if isinstance(k, str) and k),
        tag=raw.get("tag") is True,
    )


def matched_keyword(keywords, text: Optional[str], caption: Optional[str]) -> Optional[str]:
    """The first of `keywords` (as configured) that `text` or `caption`
    contains, ignoring case; None when none does.

    `str.lower` rather than `casefold` so that both twins fold case the same
    way (JavaScript has only `toLowerCase`).
    """
    haystacks = [s.lower() for s in (text, caption) if s]
    for keyword in keywords:
        needle = keyword.lower()
        if any(needle in haystack for haystack in haystacks):
            return keyword
    return None


def decide(
    config: Config,
    *,
    is_message: bool,
    text: Optional[str],
    caption: Optional[str],
    event_data: Callable[[], str],
) -> Decision:
    """The decision about one event.

    `event_data` returns the event's whole data as JSON text; it is called
    only when a kept message is tagged, because fetching it costs the host a
    serialisation the plain keep/drop decision does not need.
    """
    if not is_message or not config.keywords:
        return KEEP
    keyword = matched_keyword(config.keywords, text, caption)
    if keyword is None:
        return DROP
    if not config.tag:
        return KEEP
    try:
        data = json.loads(event_data())
    except ValueError:
        # The host always sends an object; should it not, the message still
        # matched, so it goes through untagged rather than being lost.
        return KEEP
    if not isinstance(data, dict):
        return KEEP
    data["matched_keyword"] = keyword
    return Decision("replace", json.dumps(data, ensure_ascii=False, separators=(",", ":")))
