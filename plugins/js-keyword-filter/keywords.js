// The pure logic of the keyword filter: no bindings, so it runs (and is
// tested, `node --test`) on plain Node. `app.js` wires it to the WIT world;
// the Python twin (`plugins/python-keyword-filter/keywords.py`) decides the
// same way.
//
// Configuration: `{"keywords": ["order", "refund"], "tag": false}`. A message
// event is kept when its text or caption contains a keyword (case-insensitive)
// and dropped otherwise; other events are kept, and so is everything when no
// keyword is configured. With `"tag": true` a kept message is replaced by its
// whole data plus `"matched_keyword"`.
//
// Decisions are the WIT variant `filter-decision` as ComponentizeJS lifts it
// (`{tag: "keep"}`, `{tag: "drop"}`, `{tag: "replace", val: "<json>"}`), so
// `app.js` returns them as they are.

/** Let the event through unchanged. */
export const KEEP = Object.freeze({ tag: "keep" });
/** Stop the event. */
export const DROP = Object.freeze({ tag: "drop" });

/**
 * The configuration in `configJson`: `{keywords: string[], tag: boolean}`.
 *
 * A configuration that is not a JSON object, keywords that are not an array,
 * and entries that are not non-empty strings are ignored rather than refused:
 * a filter has no way to report a bad configuration except by failing every
 * event, and keeping events is the safer failure. An empty keyword is left
 * out because it would "match" every text.
 *
 * @param {string} configJson
 * @returns {{keywords: string[], tag: boolean}}
 */
export function parseConfig(configJson) {
  let raw;
  try {
    raw = JSON.parse(configJson);
  } catch {
    raw = null;
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return { keywords: [], tag: false };
  }
  const keywords = Array.isArray(raw.keywords) ? raw.keywords : [];
  return {
    keywords: keywords.filter((k) => typeof k === "string" && k !== ""),
    tag: raw.tag === true,
  };
}

/**
 * The first of `keywords` (as configured) that `text` or `caption` contains,
 * ignoring case; `undefined` when none does.
 *
 * @param {string[]} keywords
 * @param {string | undefined} text
 * @param {string | undefined} caption
 * @returns {string | undefined}
 */
export function matchedKeyword(keywords, text, caption) {
  const haystacks = [text, caption].filter((s) => s).map((s) => s.toLowerCase());
  return keywords.find((keyword) => {
    const needle = keyword.toLowerCase();
    return haystacks.some((haystack) => haystack.includes(needle));
  });
}

/**
 * The decision about one event.
 *
 * `message` is the event's `message` record (`undefined` for events other
 * than messages); only its `text` and `caption` are read. `eventData`
 * returns the event's whole data as JSON text; it is called only when a kept
 * message is tagged, because fetching it costs the host a serialisation the
 * plain keep/drop decision does not need.
 *
 * @param {{keywords: string[], tag: boolean}} config
 * @param {{text?: string, caption?: string} | undefined} message
 * @param {() => string} eventData
 */
export function decide(config, message, eventData) {
  if (message === undefined || message === null || config.keywords.length === 0) {
    return KEEP;
  }
  const keyword = matchedKeyword(config.keywords, message.text, message.caption);
  if (keyword === undefined) {
    return DROP;
  }
  if (!config.tag) {
    return KEEP;
  }
  let data;
  try {
    data = JSON.parse(eventData());
  } catch {
    // The host always sends an object; should it not, the message still
    // matched, so it goes through untagged rather than being lost.
    return KEEP;
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    return KEEP;
  }
  data.matched_keyword = keyword;
  return { tag: "replace", val: JSON.stringify(data) };
}
