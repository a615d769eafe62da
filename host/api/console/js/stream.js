// The live event stream (GET /api/v1/events/stream, Server-Sent Events).
//
// EventSource cannot send an Authorization header, and a token in the URL
// would land in logs and history. So the console reads the stream with
// fetch() and a ReadableStream reader, sending the same bearer token as
// every other call, and parses the SSE framing itself. A dropped stream is
// reopened after a pause until close() is called.

import { token } from './auth.js';

/**
 * Opens the stream. `session`: a session id or undefined for all;
 * `onEvent({event, envelope})` per event; `onState(state, detail)` with
 * `connecting`, `live` or `error`. Returns `{close()}`.
 */
export function openStream({ session, onEvent, onState = () => {} }) {
  const controller = new AbortController();
  let closed = false;

  const run = async () => {
    while (!closed) {
      onState('connecting');
      try {
        const query = session ? `?session=${encodeURIComponent(session)}` : '';
        const resp = await fetch(`/api/v1/events/stream${query}`, {
          headers: { Authorization: `Bearer ${token()}`, Accept: 'text/event-stream' },
          signal: controller.signal,
        });
        if (!resp.ok || !resp.body) {
          const body = await resp.json().catch(() => null);
          throw new Error(body?.error?.message || `the stream answered ${resp.status}`);
        }
        await read(resp.body, onEvent, () => onState('live'));
        if (!closed) onState('error', 'the stream ended; reconnecting');
      } catch (e) {
        if (closed) return;
        onState('error', e.message);
      }
      if (!closed) await new Promise((r) => setTimeout(r, 2000));
    }
  };
  run();
  return {
    close() {
      closed = true;
      controller.abort();
    },
  };
}

/** Reads SSE frames from `body` until it ends, handing each event to `onEvent`. */
async function read(body, onEvent, onOpen) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let opened = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    if (!opened) {
      opened = true;
      onOpen();
    }
    buffer += value;
    let end;
    while ((end = frameEnd(buffer)) !== null) {
      const frame = buffer.slice(0, end.at);
      buffer = buffer.slice(end.at + end.len);
      const parsed = parseFrame(frame);
      if (parsed) onEvent(parsed);
    }
  }
}

/** Where the first complete frame ends (a blank line), or null. */
function frameEnd(buffer) {
  const m = /\r?\n\r?\n/.exec(buffer);
  return m ? { at: m.index, len: m[0].length } : null;
}

/** One SSE frame as `{event, envelope}`; comments and empty frames give null. */
export function parseFrame(frame) {
  let event = 'message';
  const data = [];
  for (const line of frame.split(/\r?\n/)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'event') event = value;
    else if (name === 'data') data.push(value);
  }
  if (data.length === 0) return null;
  let envelope;
  try {
    envelope = JSON.parse(data.join('\n'));
  } catch {
    envelope = { data: data.join('\n') };
  }
  return { event, envelope };
}
