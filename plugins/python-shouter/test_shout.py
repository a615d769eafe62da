"""Unit tests of the shouter's pure logic: `python3 -m unittest discover -s plugins/python-shouter`."""

import json
import unittest

from shout import shout


class ShoutTest(unittest.TestCase):
    def test_message_text_is_upper_cased(self):
        out = shout("message", json.dumps({"text": "hello, Wörld", "from": "x"}))
        self.assertEqual(json.loads(out), {"text": "HELLO, WÖRLD", "from": "x"})

    def test_other_events_and_messages_without_text_are_kept(self):
        self.assertIsNone(shout("receipt", json.dumps({"text": "hi"})))
        self.assertIsNone(shout("message", json.dumps({"text": None})))
        self.assertIsNone(shout("message", "not json"))
        self.assertIsNone(shout("message", json.dumps({"text": "ALREADY LOUD"})))


if __name__ == "__main__":
    unittest.main()
