// js-keyword-filter: a Switchboard event filter written in JavaScript
// (ComponentizeJS through jco) for world `event-filter-plugin` of
// `switchboard:plugin@0.2.0`.
//
// Keeps message events whose text or caption contains a configured keyword
// and drops the others (see `keywords.js` for the rules). `tests/build.rs`
// builds it with the jco pinned in `package.json`:
// `jco componentize app.js --wit ../../wit/0.2.0 --world-name
// event-filter-plugin --disable all --out keyword-filter.wasm`.

import { config, eventData } from "switchboard:plugin/host@0.2.0";

import { decide, parseConfig } from "./keywords.js";

// The last configuration seen, raw and parsed: the host hands over the
// binding's configuration on every call, and it rarely changes, so it is
// parsed again only when its text does.
let lastRaw = "";
let lastConfig = parseConfig(lastRaw);

function currentConfig() {
  const raw = config();
  if (raw !== lastRaw) {
    lastRaw = raw;
    lastConfig = parseConfig(raw);
  }
  return lastConfig;
}

/** `switchboard:plugin/meta`. */
export const meta = {
  describe() {
    return { name: "keyword-filter-js", version: "0.2.0" };
  },
};

/** `switchboard:plugin/event-filter`. */
export const eventFilter = {
  filter(event) {
    return decide(currentConfig(), event.message, eventData);
  },
};
