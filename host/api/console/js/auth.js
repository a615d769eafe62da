// The API token, kept for this browser tab only (sessionStorage): closing
// the tab signs out, and no other site or tab can read it. Beside it, what
// the token may do (GET /tokens/current), which the pages ask before they
// offer an action: the gateway refuses what a token may not do anyway, so
// this only spares the operator buttons that would fail.

const KEY = 'switchboard.token';

/** `{admin, name, scopes, sessions, expires_at}` of the signed-in token, once read. */
let current = null;

/** The signed-in token, or null. */
export function token() {
  return sessionStorage.getItem(KEY);
}

/** Remembers the token for this tab, and what it may do when known. */
export function signIn(value, rights) {
  sessionStorage.setItem(KEY, value);
  current = rights || null;
}

/** Forgets the token and its rights. */
export function signOut() {
  sessionStorage.removeItem(KEY);
  current = null;
}

/** What the signed-in token may do, or null until it has been read. */
export function rights() {
  return current;
}

/** Keeps what the signed-in token may do (the answer of GET /tokens/current). */
export function keepRights(rights) {
  current = rights;
}

/** Whether the token has `scope` (`read`, `send`, `manage`, `admin`); `admin` has them all. */
export function can(scope) {
  const scopes = current?.scopes || [];
  return scopes.includes('admin') || scopes.includes(scope);
}

/** Whether the token may see session `id` (every token may see all, or a list). */
export function covers(id) {
  const sessions = current?.sessions;
  return sessions === '*' || (Array.isArray(sessions) && sessions.includes(id));
}

/**
 * Notes that the token created session `id`: the gateway adds it to a
 * limited token's sessions, so the console lets it be opened too.
 */
export function joined(id) {
  if (Array.isArray(current?.sessions) && !current.sessions.includes(id)) current.sessions.push(id);
}

/** The name the console shows for the token: `admin` for the admin token. */
export function whoami() {
  if (!current) return '';
  return current.admin ? 'admin' : current.name;
}
