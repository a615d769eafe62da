"""The pure logic of the shouter: no bindings, so it runs (and is tested) on
any Python. `app.py` wires it to the WIT world."""

import json


def shout(event: str, data_json: str):
    """The new data (JSON text) for an event, or None to keep it as it is.

    Message events with a string `text` get it upper-cased; everything else
    is kept.
    """
    if event != "message":
        return None
    try:
        data = json.loads(data_json)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    text = data.get("text")
    if not isinstance(text, str) or text.upper() == text:
        return None
    data["text"] = text.upper()
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
