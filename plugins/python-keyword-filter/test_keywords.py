"""Unit tests of the keyword filter's pure logic:
`python3 -m unittest discover -s plugins/python-keyword-filter`."""

import json
import unittest

from keywords import DROP, KEEP, Config, Decision, decide, parse_config


def no_event_data():
    raise AssertionError("event-data was fetched although the decision does not need it")


def message(config, text=None, caption=None, event_data=no_event_data):
    return decide(config, is_message=True, text=text, caption=caption, event_data=event_data)


ORDERS = Config(keywords=("order", "refund"))
TAGGING = Config(keywords=("order", "refund"), tag=True)


class ConfigTest(unittest.TestCase):
    def test_keywords_and_tag_are_read_from_the_configuration(self):
        self.assertEqual(
            parse_config('{"keywords": ["order", "refund"], "tag": true}'),
            Config(keywords=("order", "refund"), tag=True),
        )

    def test_tagging_is_off_unless_tag_is_exactly_true(self):
        self.assertFalse(parse_config('{"keywords": ["a"]}').tag)
        self.assertFalse(parse_config('{"keywords": ["a"], "tag": "yes"}').tag)

    def test_a_malformed_configuration_configures_no_keyword(self):
        for raw in ["", "not json", "[]", '{"keywords": "order"}', "{}"]:
            self.assertEqual(parse_config(raw), Config(), raw)

    def test_keywords_that_are_not_non_empty_strings_are_ignored(self):
        self.assertEqual(
            parse_config('{"keywords": ["order", 3, null, "", "refund"]}').keywords,
            ("order", "refund"),
        )


class DecideTest(unittest.TestCase):
    def test_events_other_than_messages_are_kept(self):
        decision = decide(ORDERS, is_message=False, text=None, caption=None, event_data=no_event_data)
        self.assertEqual(decision, KEEP)

    def test_a_message_whose_text_contains_a_keyword_is_kept(self):
        self.assertEqual(message(ORDERS, text="where is my order?"), KEEP)

    def test_a_message_whose_caption_contains_a_keyword_is_kept(self):
        self.assertEqual(message(ORDERS, caption="refund receipt attached"), KEEP)

    def test_keywords_match_whatever_the_case(self):
        self.assertEqual(message(ORDERS, text="ORDER #12"), KEEP)
        self.assertEqual(message(Config(keywords=("ReFund",)), text="a refund please"), KEEP)
        self.assertEqual(message(ORDERS, text="Zurück: Ärger mit der Order"), KEEP)

    def test_a_message_without_any_keyword_is_dropped(self):
        self.assertEqual(message(ORDERS, text="hello there", caption="a photo"), DROP)

    def test_a_message_with_neither_text_nor_caption_is_dropped(self):
        self.assertEqual(message(ORDERS), DROP)

    def test_with_no_keyword_configured_every_message_is_kept(self):
        self.assertEqual(message(Config(), text="hello"), KEEP)
        self.assertEqual(message(Config(tag=True), text="hello"), KEEP)

    def test_a_kept_message_is_tagged_with_the_first_configured_keyword_it_contains(self):
        data = {"message_id": "M1", "text": "Refund for ORDER 7", "from": "x@s.whatsapp.net"}
        decision = message(TAGGING, text=data["text"], event_data=lambda: json.dumps(data))
        self.assertEqual(decision.kind, "replace")
        self.assertEqual(json.loads(decision.data), dict(data, matched_keyword="order"))

    def test_the_tag_is_the_keyword_as_configured_not_as_written(self):
        decision = message(
            Config(keywords=("Refund",), tag=True),
            caption="REFUND",
            event_data=lambda: '{"caption": "REFUND"}',
        )
        self.assertEqual(decision, Decision("replace", '{"caption":"REFUND","matched_keyword":"Refund"}'))

    def test_tagging_keeps_non_ascii_text_as_it_is(self):
        decision = message(TAGGING, text="order für Zoë", event_data=lambda: '{"text": "order für Zoë"}')
        self.assertIn("für Zoë", decision.data)

    def test_a_dropped_message_is_not_tagged(self):
        self.assertEqual(message(TAGGING, text="nothing to see"), DROP)

    def test_a_matching_message_is_kept_untagged_when_its_data_is_not_an_object(self):
        self.assertEqual(message(TAGGING, text="order", event_data=lambda: "[1]"), KEEP)
        self.assertEqual(message(TAGGING, text="order", event_data=lambda: "nope"), KEEP)


if __name__ == "__main__":
    unittest.main()
