// Calls to the gateway's /api/v1 with the bearer token. Every failure
// becomes an ApiError carrying the gateway's error code and message, so the
// page can say what went wrong in the gateway's own words.

import { token, signOut } from './auth.js';

const BASE = '/api/v1';

/** A failed API call: HTTP status, the gateway's error code and message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Called when the gateway refuses the token (set by main.js). */
let onUnauthorized = () => {};

/** Sets what happens when a call answers 401. */
export function whenUnauthorized(fn) {
  onUnauthorized = fn;
}

/**
 * Calls `method path` (path relative to /api/v1). `body`: an object (sent
 * as JSON), a Blob/ArrayBuffer (sent as `contentType`), or undefined.
 * Resolves to the parsed JSON answer; rejects with an ApiError.
 */
export async function call(method, path, body, { contentType, auth = token() } = {}) {
  const headers = { Accept: 'application/json' };
  if (auth) headers.Authorization = `Bearer ${auth}`;
  let payload;
  if (body instanceof Blob || body instanceof ArrayBuffer) {
    payload = body;
    headers['Content-Type'] = contentType || 'application/octet-stream';
  } else if (body !== undefined) {
    payload = JSON.stringify(body);
    headers['Content-Type'] = 'application/json';
  }
  let resp;
  try {
    resp = await fetch(BASE + path, { method, headers, body: payload });
  } catch (e) {
    throw new ApiError(0, 'unreachable', `The gateway did not answer (${e.message}). Is it running?`);
  }
  const text = await resp.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!resp.ok) {
    const err = json && json.error;
    const apiErr = new ApiError(
      resp.status,
      err?.code || `http_${resp.status}`,
      err?.message || `${method} ${path} answered ${resp.status} ${resp.statusText}`,
    );
    if (resp.status === 401 && auth === token()) {
      signOut();
      onUnauthorized(apiErr);
    }
    throw apiErr;
  }
  return json;
}

/**
 * The bytes at `url` (a media route, path or absolute), fetched with the
 * token: a link cannot carry it, so the page opens what this resolves to.
 */
export async function fetchBlob(url) {
  const headers = {};
  const auth = token();
  if (auth) headers.Authorization = `Bearer ${auth}`;
  const resp = await fetch(url, { headers });
  if (!resp.ok) {
    let err = null;
    try {
      err = (await resp.json()).error;
    } catch {
      err = null;
    }
    throw new ApiError(resp.status, err?.code || `http_${resp.status}`, err?.message || `GET ${url} answered ${resp.status}`);
  }
  return resp.blob();
}

/** GET. */
export const get = (path) => call('GET', path);
/** POST with an optional JSON body. */
export const post = (path, body) => call('POST', path, body);
/** PUT with a JSON body. */
export const put = (path, body) => call('PUT', path, body);
/** DELETE. */
export const del = (path) => call('DELETE', path);

/** Encodes one path segment. */
export const seg = (s) => encodeURIComponent(s);
