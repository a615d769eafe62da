// Unit tests of the keyword filter's pure logic:
// `node --test plugins/js-keyword-filter/`.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { DROP, KEEP, decide, parseConfig } from "./keywords.js";

function noEventData() {
  throw new Error("event-data was fetched although the decision does not need it");
}

const ORDERS = { keywords: ["order", "refund"], tag: false };
const TAGGING = { keywords: ["order", "refund"], tag: true };

describe("the configuration", () => {
  test("keywords and tag are read from the configuration", () => {
    assert.deepEqual(parseConfig('{"keywords": ["order", "refund"], "tag": true}'), {
      keywords: ["order", "refund"],
      tag: true,
    });
  });

  test("tagging is off unless tag is exactly true", () => {
    assert.equal(parseConfig('{"keywords": ["a"]}').tag, false);
    assert.equal(parseConfig('{"keywords": ["a"], "tag": "yes"}').tag, false);
  });

  test("a malformed configuration configures no keyword", () => {
    for (const raw of ["", "not json", "[]", "null", '{"keywords": "order"}', "{}"]) {
      assert.deepEqual(parseConfig(raw), { keywords: [], tag: false }, raw);
    }
  });

  test("keywords that are not non-empty strings are ignored", () => {
    assert.deepEqual(
      parseConfig('{"keywords": ["order", 3, null, "", "refund"]}').keywords,
      ["order", "refund"],
    );
  });
});

describe("the decision", () => {
  test("events other than messages are kept", () => {
    assert.equal(decide(ORDERS, undefined, noEventData), KEEP);
  });

  test("a message whose text contains a keyword is kept", () => {
    assert.equal(decide(ORDERS, { text: "where is my order?" }, noEventData), KEEP);
  });

  test("a message whose caption contains a keyword is kept", () => {
    assert.equal(decide(ORDERS, { caption: "refund receipt attached" }, noEventData), KEEP);
  });

  test("keywords match whatever the case", () => {
    assert.equal(decide(ORDERS, { text: "ORDER #12" }, noEventData), KEEP);
    assert.equal(decide({ keywords: ["ReFund"], tag: false }, { text: "a refund please" }, noEventData), KEEP);
    assert.equal(decide(ORDERS, { text: "Zurück: Ärger mit der Order" }, noEventData), KEEP);
  });

  test("a message without any keyword is dropped", () => {
    assert.equal(decide(ORDERS, { text: "hello there", caption: "a photo" }, noEventData), DROP);
  });

  test("a message with neither text nor caption is dropped", () => {
    assert.equal(decide(ORDERS, {}, noEventData), DROP);
  });

  test("with no keyword configured every message is kept", () => {
    assert.equal(decide({ keywords: [], tag: false }, { text: "hello" }, noEventData), KEEP);
    assert.equal(decide({ keywords: [], tag: true }, { text: "hello" }, noEventData), KEEP);
  });

  test("a kept message is tagged with the first configured keyword it contains", () => {
    const data = { message_id: "M1", text: "Refund for ORDER 7", from: "x@s.whatsapp.net" };
    const decision = decide(TAGGING, { text: data.text }, () => JSON.stringify(data));
    assert.equal(decision.tag, "replace");
    assert.deepEqual(JSON.parse(decision.val), { ...data, matched_keyword: "order" });
  });

  test("the tag is the keyword as configured, not as written", () => {
    const decision = decide({ keywords: ["Refund"], tag: true }, { caption: "REFUND" }, () => '{"caption": "REFUND"}');
    assert.deepEqual(decision, { tag: "replace", val: '{"caption":"REFUND","matched_keyword":"Refund"}' });
  });

  test("tagging keeps non-ASCII text as it is", () => {
    const decision = decide(TAGGING, { text: "order für Zoë" }, () => '{"text": "order für Zoë"}');
    assert.match(decision.val, /für Zoë/);
  });

  test("a dropped message is not tagged", () => {
    assert.equal(decide(TAGGING, { text: "nothing to see" }, noEventData), DROP);
  });

  test("a matching message is kept untagged when its data is not an object", () => {
    assert.equal(decide(TAGGING, { text: "order" }, () => "[1]"), KEEP);
    assert.equal(decide(TAGGING, { text: "order" }, () => "nope"), KEEP);
  });
});
